/**
 * A grant lasts only while it is true on a Nest socket.io gateway: a client granted a message stays
 * connected; when its token is revoked, expires (real time) or a new policy takes the permission
 * away, it receives an `exception` event with the problem body and is then disconnected. A client
 * whose token is missing or invalid is refused and disconnected. Every watch is closed once its
 * socket is gone. Real Nest application on 127.0.0.1:0, real socket.io client, loopback IAM.
 */
import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { Test } from '@nestjs/testing';
import { io, type Socket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import type { Authorizer } from '../../../src/index.js';
import { Authenticated, IamAuthzModule, RequirePermission } from '../../../adapters/nestjs/index.js';
import { examplePolicy, uniqueApp, useIam } from '../../helpers/index.js';

const iam = useIam();
const sec = (): number => Math.floor(Date.now() / 1000);
const vinOf = (body: unknown): string | undefined => (body as { vin?: string } | undefined)?.vin;

@WebSocketGateway()
class FleetGateway {
  @SubscribeMessage('follow')
  @RequirePermission('vehicle-service', 'READ', 'VIN', (view) => vinOf(view.body))
  follow(@MessageBody() body: { vin: string }) {
    return { following: body.vin };
  }

  @SubscribeMessage('whoami')
  @Authenticated()
  whoami() {
    return { ok: true };
  }
}

let authorizer: Authorizer;
let app: INestApplication;
let url: string;
const sockets: Socket[] = [];

beforeAll(async () => {
  authorizer = iam.authorizer({ now: Date.now, clockToleranceSec: 0, policy: { ttlMs: 1_000 } });
  const moduleRef = await Test.createTestingModule({ imports: [IamAuthzModule.forRoot({ authorizer })], providers: [FleetGateway] }).compile();
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class
  app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.disconnect();
  // The server sees each disconnect a moment later; then no watch is left.
  await until(() => authorizer.status().watches.open === 0, 2_000);
  expect(authorizer.status().watches.open).toBe(0);
});
afterAll(async () => {
  await app.close();
});

async function until(done: () => boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !done() && Date.now() < end;) await new Promise((r) => setTimeout(r, 25));
}

/** A connected client; `events` records its `exception` and `disconnect` events in order. */
async function connect(options: { token?: unknown; header?: string }): Promise<{ socket: Socket; events: [string, unknown][] }> {
  const socket = io(url, {
    transports: ['websocket'],
    reconnection: false,
    ...(options.token !== undefined ? { auth: { token: options.token } } : {}),
    ...(options.header !== undefined ? { extraHeaders: { authorization: options.header } } : {}),
  });
  sockets.push(socket);
  const events: [string, unknown][] = [];
  socket.on('exception', (body: unknown) => { events.push(['exception', body]); });
  socket.on('disconnect', (reason) => { events.push(['disconnect', reason]); });
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('connect_error', reject); });
  return { socket, events };
}

/** Sends a message; its acknowledgement, or `undefined` when none comes within `ms`. */
function send(socket: Socket, event: string, data: unknown, ms = 1_000): Promise<unknown> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { resolve(undefined); }, ms);
    socket.emit(event, data, (ack: unknown) => {
      clearTimeout(timer);
      resolve(ack);
    });
  });
}

/** Waits until the client is disconnected; its events then. */
async function disconnected(client: { socket: Socket; events: [string, unknown][] }, ms: number): Promise<[string, unknown][]> {
  await until(() => client.events.some(([name]) => name === 'disconnect'), ms);
  return client.events;
}

const token = (claims: Record<string, unknown> = {}): string => iam.token({ jti: `jti-${uniqueApp()}`, iat: sec(), exp: sec() + 3600, ...claims });

test('a granted client stays connected, with one watch for its socket', async () => {
  const client = await connect({ token: token({ ars: [{ r: ['DRIVER'], c: ['VIN=WVW1', 'VIN=WVW3'] }] }) });
  expect(await send(client.socket, 'follow', { vin: 'WVW1' })).toEqual({ following: 'WVW1' });
  expect(await send(client.socket, 'follow', { vin: 'WVW1' })).toEqual({ following: 'WVW1' });
  // A second resource joins the socket's one watch.
  expect(await send(client.socket, 'follow', { vin: 'WVW3' })).toEqual({ following: 'WVW3' });
  expect(authorizer.status().watches.open).toBe(1);
  // Policy revalidations that leave the grant alone do not end it.
  await new Promise((r) => setTimeout(r, 1_500));
  expect(client.socket.connected).toBe(true);
  expect(client.events).toEqual([]);
  // A denied resource is refused on its own (403): the socket stays.
  await send(client.socket, 'follow', { vin: 'WVW2' }, 300);
  expect(client.events).toEqual([['exception', expect.objectContaining({ status: 403, code: 'ERR_PERMISSION_DENIED' })]]);
  expect(client.socket.connected).toBe(true);
});

test('revoked: an exception with ERR_TOKEN_REVOKED (401), then the disconnect', async () => {
  const jti = `jti-${uniqueApp()}`;
  const client = await connect({ token: token({ jti }) });
  expect(await send(client.socket, 'follow', { vin: 'WVW1' })).toEqual({ following: 'WVW1' });
  await authorizer.revoke({ jti });
  expect(await disconnected(client, 2_000)).toEqual([
    ['exception', expect.objectContaining({ status: 401, code: 'ERR_TOKEN_REVOKED' })],
    ['disconnect', 'io server disconnect'],
  ]);
});

test('an @Authenticated() message: the token alone is watched; revoked, then disconnected', async () => {
  const jti = `jti-${uniqueApp()}`;
  const client = await connect({ token: token({ jti }) });
  expect(await send(client.socket, 'whoami', {})).toBeDefined();
  expect(authorizer.status().watches.open).toBe(1);
  await authorizer.revoke({ jti });
  expect(await disconnected(client, 2_000)).toEqual([
    ['exception', expect.objectContaining({ status: 401, code: 'ERR_TOKEN_REVOKED' })],
    ['disconnect', 'io server disconnect'],
  ]);
});

test('expired (real time): an exception with ERR_TOKEN_EXPIRED, then the disconnect', async () => {
  const exp = sec() + 2;
  const client = await connect({ header: `Bearer ${token({ exp })}` });
  expect(await send(client.socket, 'follow', { vin: 'WVW1' })).toEqual({ following: 'WVW1' });
  const events = await disconnected(client, 5_000);
  expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000);
  expect(events).toEqual([
    ['exception', expect.objectContaining({ status: 401, code: 'ERR_TOKEN_EXPIRED' })],
    ['disconnect', 'io server disconnect'],
  ]);
});

test('a policy that takes the permission away: ERR_PERMISSION_DENIED (403), then the disconnect', async () => {
  const app1 = uniqueApp();
  iam.policy = (app) => examplePolicy('c1', app);
  const client = await connect({ token: token({ app: app1 }) });
  expect(await send(client.socket, 'follow', { vin: 'WVW1' })).toEqual({ following: 'WVW1' });
  iam.policy = (app) => (app === app1 ? { ...examplePolicy('c2', app), roles: [{ key: 'DRIVER' }] } : examplePolicy('c1', app));
  expect(await disconnected(client, 4_000)).toEqual([
    ['exception', expect.objectContaining({ status: 403, code: 'ERR_PERMISSION_DENIED' })],
    ['disconnect', 'io server disconnect'],
  ]);
});

test('a missing, invalid or ambiguous token is refused (401), then disconnected; no refused socket is watched', async () => {
  const good = token();
  for (const [options, code] of [
    [{}, 'ERR_TOKEN_MISSING'],
    [{ token: `${good.slice(0, -4)}AAAA` }, 'ERR_TOKEN_INVALID'],
    // auth.token is the bare token; a scheme there is not one.
    [{ token: `Bearer ${good}` }, 'ERR_TOKEN_INVALID'],
    // Another scheme is no bearer token (RFC 6750: as if none were sent).
    [{ header: `Basic ${good}` }, 'ERR_TOKEN_MISSING'],
    [{ token: 42 }, 'ERR_TOKEN_MISSING'],
    // Two different tokens: which one is meant is not guessed.
    [{ token: good, header: `Bearer ${token()}` }, 'ERR_TOKEN_MISSING'],
  ] as const) {
    const client = await connect(options);
    expect(await send(client.socket, 'follow', { vin: 'WVW1' }, 300)).toBeUndefined();
    expect(await disconnected(client, 2_000), JSON.stringify(options)).toEqual([
      ['exception', expect.objectContaining({ status: 401, code })],
      ['disconnect', 'io server disconnect'],
    ]);
  }
  // Both, naming the same token: fine.
  const both = await connect({ token: good, header: `Bearer ${good}` });
  expect(await send(both.socket, 'whoami', {})).toEqual({ ok: true });
  // Its token alone is watched (an @Authenticated() message); none of the refused sockets was.
  expect(authorizer.status().watches.open).toBe(1);
});

test('clients that disconnect right after a message leave no watch behind', async () => {
  for (let i = 0; i < 5; i++) {
    const client = await connect({ token: token() });
    client.socket.emit('follow', { vin: 'WVW1' });
    if (i % 2 === 1) await new Promise((r) => setImmediate(r));
    client.socket.disconnect();
  }
  // afterEach: the server sees the disconnects, and no watch is open.
});
