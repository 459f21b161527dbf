/**
 * A grant lasts only while it is true on a socket.io gateway: a socket keeps what its messages were
 * granted under one `authorizer.watch`; when the token expires, is revoked or a new policy takes a
 * grant away, the client receives an `exception` event with the problem body (as a refused message
 * does) and is disconnected. The watch is closed on disconnect. Duck-typed on socket.io's server
 * `Socket`: nothing here imports socket.io or @nestjs/websockets.
 */
import { isIamAuthzError, PolicyUnavailableError, type AuthorizeQuery, type IamState, type Watch } from '../../src/index.js';
import { watchGrantedOf } from '../../src/adapter/internal.js';
import { grantsOf, merged, type Asked, type SocketLike, type SocketWatchContext } from './ws-grants.js';

export type { SocketLike, SocketWatchContext } from './ws-grants.js';

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

/**
 * Puts what `state` was granted under the socket's watch (`asked` `undefined`: the token alone, for
 * `@Authenticated()`, the global guard or report mode); rejects as `authorizer.watch` does.
 */
export async function watchSocket(context: SocketWatchContext, client: SocketLike, asked: Asked | undefined, state: IamState): Promise<void> {
  const grants = asked === undefined ? new Map<string, AuthorizeQuery>() : grantsOf(asked, state);
  if ((asked !== undefined && grants.size === 0) || client.connected === false) return;
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
  const identity = { token: state.token, claims: state.claims };
  // No grant: the token alone (expiry, revocation), through the adapters' way in.
  const watch = all.size > 0 ? await context.authorizer.watch(identity, [...all.values()]) : watchGrantedOf(context.authorizer)?.(identity, []);
  if (watch === undefined) return;
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
