/**
 * What `IamGuard` does on a gateway besides deciding: a socket.io socket keeps what its messages
 * were granted under watch (ws-watch.ts), and a socket refused with a 401 is disconnected.
 */
import type { IamState } from '../../src/index.js';
import type { IamAuthzCore } from './core.js';
import type { IamRequirement } from './metadata.js';
import { watchSocket, type SocketLike } from './ws-watch.js';

/** Whether `client` is a socket.io socket that can be watched and disconnected. */
function isSocketIo(client: unknown): client is SocketLike {
  const c = client as Partial<Record<keyof SocketLike, unknown>> | null;
  return typeof c === 'object' && c !== null && typeof c.emit === 'function' && typeof c.disconnect === 'function' && typeof c.once === 'function';
}

/**
 * After a granted message: its grants join the socket's watch in enforce mode; otherwise (an
 * authenticated message, or report mode, which never refuses a permission) the token alone is
 * watched. Other WebSocket libraries' clients are not watched.
 */
export async function watchGranted(core: IamAuthzCore, client: unknown, requirement: IamRequirement | undefined, state: IamState | undefined): Promise<void> {
  if (state === undefined || !isSocketIo(client)) return;
  const enforced = requirement?.kind === 'permission' && state.shadow !== true && (requirement.mode ?? core.mode) === 'enforce';
  await watchSocket({ authorizer: core.authorizer, problem: (error) => core.guards.errorResponse(error).body }, client, enforced ? requirement : undefined, state);
}

/**
 * After a 401 on a message: a socket's token is its handshake's, so it stays refused; the socket
 * goes once the `exception` event Nest emits for the refusal is out (Nest's filter emits it in the
 * same turn, so before this runs, after the pending microtasks).
 */
export function disconnectAfterException(client: unknown): void {
  if (isSocketIo(client)) setImmediate(() => { client.disconnect(true); });
}
