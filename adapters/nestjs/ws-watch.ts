/**
 * A grant that lasts only while it is true, on a socket.io gateway: a socket keeps the permissions
 * its messages were granted under one `authorizer.watch`, and when the token expires, is revoked or
 * a new policy takes one of them away, the client receives an `exception` event with the problem
 * body (as a refused message does) and is disconnected. The watch is closed on disconnect.
 * Duck-typed on socket.io's server `Socket`: nothing here imports socket.io or @nestjs/websockets.
 */
import { isIamAuthzError, PolicyUnavailableError, type AuthorizeQuery, type Authorizer, type IamAuthzError, type IamState, type Watch } from '../../src/index.js';

/** What of socket.io's server-side `Socket` is used. */
interface SocketLike {
  readonly connected?: boolean;
  emit(event: string, body: unknown): unknown;
  disconnect(close?: boolean): unknown;
  once(event: 'disconnect', listener: () => void): unknown;
}

/** What the watch of a socket needs of the module. */
export interface SocketWatchContext {
  readonly authorizer: Authorizer;
  /** The problem body of `error`, as the module's guards render it (realm, exposeDecision). */
  readonly problem: (error: IamAuthzError) => object;
}

/**
 * The most grants one socket keeps under watch; past it the oldest leave the watch (a message for
 * them is still checked by the guard, as every message is).
 */
const MAX_QUERIES = 64;

/** What of a `@RequirePermission` requirement names the grants. */
interface Asked {
  readonly service: string;
  /** The resource type, or `undefined` for node ids. */
  readonly type: string | undefined;
  readonly permissions: readonly string[];
}

interface Entry {
  /** The token the watch is of: a socket's handshake token does not change, but `iamAuthorization` may. */
  token: string;
  queries: Map<string, AuthorizeQuery>;
  watch: Watch | undefined;
  /** Updates run one at a time: each message's waits for the one before. */
  chain: Promise<void>;
  closed: boolean;
}

const entries = new WeakMap<object, Entry>();

/** Whether `client` is a socket.io socket this module can watch and disconnect. */
export function isSocketIo(client: unknown): client is SocketLike {
  const c = client as Partial<Record<keyof SocketLike, unknown>> | null;
  return typeof c === 'object' && c !== null && typeof c.emit === 'function' && typeof c.disconnect === 'function' && typeof c.once === 'function';
}

/**
 * Disconnects `client` once the `exception` event Nest is about to emit for a refused message has
 * gone out (Nest's filter emits it within the same turn, so after the pending microtasks).
 */
export function disconnectAfterException(client: unknown): void {
  if (isSocketIo(client)) setImmediate(() => { client.disconnect(true); });
}

/**
 * Puts the grants in `state` (a message just granted under `requirement`) under the socket's watch.
 * Resolves once they are watched; rejects with the `IamAuthzError` of `authorizer.watch` when a
 * grant is no longer true (the message is then refused like any other).
 */
export async function watchSocket(context: SocketWatchContext, client: SocketLike, requirement: Asked, state: IamState): Promise<void> {
  const queries = queriesOf(requirement, state);
  if (queries.size === 0 || client.connected === false) return;
  let entry = entries.get(client);
  if (entry === undefined) {
    const created: Entry = { token: state.token, queries: new Map(), watch: undefined, chain: Promise.resolve(), closed: false };
    entries.set(client, entry = created);
    client.once('disconnect', () => { end(client, created); });
  }
  if (entry.closed) return;
  const current = entry;
  const update = current.chain.then(() => extend(context, client, current, state, queries));
  current.chain = update.catch(() => undefined);
  return update;
}

async function extend(context: SocketWatchContext, client: SocketLike, entry: Entry, state: IamState, queries: ReadonlyMap<string, AuthorizeQuery>): Promise<void> {
  if (entry.closed) return;
  const sameToken = entry.token === state.token;
  if (sameToken && entry.watch !== undefined && [...queries.keys()].every((key) => entry.queries.has(key))) return;
  const all = new Map(sameToken ? entry.queries : []);
  for (const [key, query] of queries) {
    all.delete(key);
    all.set(key, query);
  }
  for (const key of all.keys()) {
    if (all.size <= MAX_QUERIES) break;
    all.delete(key);
  }
  const watch = await context.authorizer.watch({ token: state.token, claims: state.claims }, [...all.values()]);
  // Disconnected while the watch was made: nothing is kept.
  if (isClosed(entry)) {
    watch.close();
    return;
  }
  // The new watch covers everything the old one did (or another token): the old one goes.
  entry.watch?.close();
  entry.watch = watch;
  entry.queries = all;
  entry.token = state.token;
  watch.signal.addEventListener('abort', () => {
    if (entry.watch !== watch) return;
    end(client, entry);
    const reason: unknown = watch.signal.reason;
    client.emit('exception', context.problem(isIamAuthzError(reason) ? reason : new PolicyUnavailableError('the watch of this socket ended')));
    client.disconnect(true);
  }, { once: true });
}

/** Read through a call: `entry.closed` changes while awaiting. */
function isClosed(entry: Entry): boolean {
  return entry.closed;
}

function end(client: object, entry: Entry): void {
  entry.closed = true;
  entry.watch?.close();
  entry.watch = undefined;
  entries.delete(client);
}

/**
 * The queries `state` was granted, keyed: per resource, the permission that granted it (with
 * `@RequireAnyPermission`, the one found; losing it ends the watch even if another would grant).
 */
function queriesOf(requirement: Asked, state: IamState): Map<string, AuthorizeQuery> {
  const queries = new Map<string, AuthorizeQuery>();
  const decisions = state.decisions ?? (state.decision === undefined ? [] : [state.decision]);
  const { service, type, permissions } = requirement;
  for (const decision of decisions) {
    if (!decision.granted) continue;
    const permission = decision.grantedBy?.permission ?? (permissions.length === 1 ? permissions[0] : undefined);
    if (permission === undefined) continue;
    const { reference } = decision;
    const resource = type === undefined ? { node: reference } : { type, value: reference.startsWith(`${type}=`) ? reference.slice(type.length + 1) : reference };
    queries.set(`${service}\u0000${permission}\u0000${reference}`, { service, permission, resource });
  }
  return queries;
}
