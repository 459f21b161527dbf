/**
 * The watch of one socket (ws-watch.ts) against a stand-in for socket.io's server `Socket`, where
 * the order of events must be forced: a socket gone while its watch is being made keeps nothing; a
 * grant already watched costs no new watch; an ended watch emits the problem body, then disconnects.
 */
import { EventEmitter } from 'node:events';
import { expect, test } from 'vitest';
import type { Authorizer, IamState } from '../../../src/index.js';
import { watchSocket, type SocketWatchContext } from '../../../adapters/nestjs/ws-watch.js';
import { useIam } from '../../helpers/index.js';

const iam = useIam();
const sec = (): number => Math.floor(Date.now() / 1000);
const ASKED = { service: 'vehicle-service', type: 'VIN', permissions: ['READ'] } as const;

/** What socket.io's server `Socket` offers the watch; `sent` records what it emitted and did. */
class FakeSocket extends EventEmitter {
  connected = true;
  readonly sent: unknown[] = [];
  override emit(event: string, ...args: unknown[]): boolean {
    if (event === 'exception') this.sent.push(['exception', args[0]]);
    return super.emit(event, ...args);
  }
  disconnect(): this {
    this.sent.push(['disconnect']);
    this.connected = false;
    super.emit('disconnect', 'server namespace disconnect');
    return this;
  }
}

async function setup(): Promise<{ authorizer: Authorizer; state: IamState; context: SocketWatchContext }> {
  const authorizer = iam.authorizer({ now: Date.now });
  const identity = await authorizer.authenticate(iam.bearer({ jti: `jti-${Math.random()}`, iat: sec(), exp: sec() + 3600 }));
  const decision = await authorizer.authorize(identity, { service: ASKED.service, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } });
  return { authorizer, state: { token: identity.token, claims: identity.claims, decision }, context: { authorizer, problem: (e) => e.problemDetails } };
}

test('a socket gone while its watch is being made keeps no watch', async () => {
  const { authorizer, state, context } = await setup();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  const gated: SocketWatchContext = { ...context, authorizer: { ...authorizer, watch: async (...args: Parameters<Authorizer['watch']>) => { await gate; return authorizer.watch(...args); } } };
  const socket = new FakeSocket();
  const watching = watchSocket(gated, socket, ASKED, state);
  // Let the update reach the gated watch(), then disconnect.
  await new Promise((r) => setImmediate(r));
  socket.disconnect();
  release();
  await watching;
  expect(authorizer.status().watches.open).toBe(0);
});

test('a grant already watched makes no new watch; the end emits the problem body, then disconnects', async () => {
  const { authorizer, state, context } = await setup();
  let made = 0;
  const counting: SocketWatchContext = { ...context, authorizer: { ...authorizer, watch: (...args: Parameters<Authorizer['watch']>) => { made++; return authorizer.watch(...args); } } };
  const socket = new FakeSocket();
  await watchSocket(counting, socket, ASKED, state);
  await watchSocket(counting, socket, ASKED, state);
  expect(made).toBe(1);
  expect(authorizer.status().watches.open).toBe(1);
  await authorizer.revoke({ jti: state.claims.jti as string });
  expect(socket.sent).toEqual([['exception', expect.objectContaining({ status: 401, code: 'ERR_TOKEN_REVOKED' })], ['disconnect']]);
  expect(authorizer.status().watches.open).toBe(0);
});

test('a disconnected socket is not watched; after a disconnect nothing is emitted', async () => {
  const { authorizer, state, context } = await setup();
  const gone = new FakeSocket();
  gone.connected = false;
  await watchSocket(context, gone, ASKED, state);
  expect(authorizer.status().watches.open).toBe(0);
  const socket = new FakeSocket();
  await watchSocket(context, socket, ASKED, state);
  socket.disconnect();
  expect(authorizer.status().watches.open).toBe(0);
  await authorizer.revoke({ jti: state.claims.jti as string });
  expect(socket.sent).toEqual([['disconnect']]);
});
