/**
 * A grant lasts only while it is true on a socket.io gateway: a socket keeps what its messages were
 * granted under one `authorizer.watch`; when the token expires, is revoked or a new policy takes a
 * grant away, the client receives an `exception` event with the problem body (as a refused message
 * does) and is disconnected. The watch is closed on disconnect. Duck-typed on socket.io's server
 * `Socket`: nothing here imports socket.io or @nestjs/websockets.
 */
import { isIamAuthzError, PolicyUnavailableError, type AuthorizeQuery, type Authorizer, type IamAuthzError, type IamState, type Watch } from '../../src/index.js';
import { grantsOf, merged, type Asked } from './ws-grants.js';

/** What of socket.io's server-side `Socket` is used. */
export interface SocketLike {
  readonly connected?: boolean;
  emit(event: string, body: unknown): unknown;
  disconnect(close?: boolean): unknown;
  once(event: 'disconnect', listener: () => void): unknown;
}

/** The module's authorizer, and the problem body of an error as its guards render it. */
export interface SocketWatchContext {
  readonly authorizer: Authorizer;
  readonly problem: (error: IamAuthzError) => object;
}

interface Entry {
  /** The token watched: a handshake's does not change, but `iamAuthorization` may. */
  token: string;
  grants: Map<string, AuthorizeQuery>;
  watch: Watch | undefined;
  /** Updates run one at a time: each message's waits for the one before. */
  chain: Promise<void>;
  closed: boolean;
}

const entries = new WeakMap<object, Entry>();

/** Puts what `state` was granted under the socket's watch; rejects as `authorizer.watch` does. */
export async function watchSocket(context: SocketWatchContext, client: SocketLike, asked: Asked, state: IamState): Promise<void> {
  const grants = grantsOf(asked, state);
  if (grants.size === 0 || client.connected === false) return;
  let entry = entries.get(client);
  if (entry === undefined) {
    const created: Entry = { token: state.token, grants: new Map(), watch: undefined, chain: Promise.resolve(), closed: false };
    entries.set(client, entry = created);
    client.once('disconnect', () => { end(client, created); });
  }
  const current = entry;
  const update = current.chain.then(() => extend(context, client, current, state, grants));
  current.chain = update.catch(() => undefined);
  return update;
}

async function extend(context: SocketWatchContext, client: SocketLike, entry: Entry, state: IamState, grants: ReadonlyMap<string, AuthorizeQuery>): Promise<void> {
  const same = entry.token === state.token;
  if (entry.closed || (same && entry.watch !== undefined && [...grants.keys()].every((key) => entry.grants.has(key)))) return;
  const all = merged(same ? entry.grants : new Map(), grants);
  const watch = await context.authorizer.watch({ token: state.token, claims: state.claims }, [...all.values()]);
  if (isClosed(entry)) { // disconnected while the watch was made (read through a call: it changed)
    watch.close();
    return;
  }
  // The new watch covers what the old one did (or is of another token): the old one goes.
  entry.watch?.close();
  Object.assign(entry, { watch, grants: all, token: state.token });
  watch.signal.addEventListener('abort', () => {
    if (entry.watch !== watch) return;
    end(client, entry);
    const { reason } = watch.signal as { reason: unknown };
    client.emit('exception', context.problem(isIamAuthzError(reason) ? reason : new PolicyUnavailableError('the watch of this socket ended')));
    client.disconnect(true);
  }, { once: true });
}

const isClosed = (entry: Entry): boolean => entry.closed;

function end(client: object, entry: Entry): void {
  entry.closed = true;
  entry.watch?.close();
  entries.delete(client);
}
