/**
 * `IamGuard` on a socket.io gateway (@nestjs/platform-socket.io) against the development IAM: the
 * token from the handshake (`auth: { token }` or the `Authorization` header), the message data
 * available to the resolver, and refusals as `WsException`s carrying the same problem body (Nest emits it on `exception`).
 */
import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import { UseGuards, type INestApplication } from '@nestjs/common';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { Test } from '@nestjs/testing';
import { io, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { IamState } from '../../../src/index.js';
import { startDevIam, type DevIam } from 'iam-authz-dev';
import { Authenticated, Iam, IamAuthzModule, IamGuard, Public, RequirePermission } from '../../../adapters/nestjs/index.js';

const config = fileURLToPath(new URL('../../../examples/vehicle-service/iam.json', import.meta.url));
let iam: DevIam;
let app: INestApplication;
let url: string;
let alice: string;
const sockets: Socket[] = [];

// Nest applies global guards (APP_GUARD) to HTTP only: a gateway names its guard itself.
@WebSocketGateway()
@UseGuards(IamGuard)
class VehicleGateway {
  @SubscribeMessage('read')
  @RequirePermission('vehicle-service', 'READ', 'VIN', (view) => (view.body as { vin?: unknown } | undefined)?.vin as string | undefined)
  read(@MessageBody() body: { vin: string }, @Iam() state: IamState) {
    return { vin: body.vin, sub: state.claims.sub, reference: state.decision?.reference };
  }

  @SubscribeMessage('ping')
  @Public()
  ping(@Iam() state: IamState | undefined) {
    return { iam: state ?? null };
  }

  @SubscribeMessage('whoami')
  @Authenticated()
  whoami(@Iam() state: IamState) {
    return { sub: state.claims.sub };
  }
}

// No @UseGuards(IamGuard): the decorated handler brings the guard itself.
@WebSocketGateway()
class BareGateway {
  @SubscribeMessage('bare-read')
  @RequirePermission('vehicle-service', 'READ', 'VIN', (view) => (view.body as { vin?: unknown } | undefined)?.vin as string | undefined)
  read(@MessageBody() body: { vin: string }, @Iam() state: IamState | undefined) {
    return { vin: body.vin, sub: state?.claims.sub ?? null };
  }
}

beforeAll(async () => {
  iam = await startDevIam({ config, console: false });
  alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
  const moduleRef = await Test.createTestingModule({ imports: [IamAuthzModule.forRoot({ baseUrl: iam.baseUrl })], providers: [VehicleGateway, BareGateway] }).compile();
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class
  app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
});
afterAll(async () => {
  for (const socket of sockets) socket.disconnect();
  await app.close();
  await iam.close();
});

async function connect(options: { token?: string; header?: string }): Promise<Socket> {
  const socket = io(url, {
    transports: ['websocket'],
    ...(options.token !== undefined ? { auth: { token: options.token } } : {}),
    ...(options.header !== undefined ? { extraHeaders: { authorization: options.header } } : {}),
  });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('connect_error', reject); });
  return socket;
}

/** Sends a message; resolves with its acknowledgement, or with the `exception` event's payload. */
function send(socket: Socket, event: string, data: unknown): Promise<{ ack?: unknown; exception?: unknown }> {
  return new Promise((resolve) => {
    const onException = (exception: unknown) => { resolve({ exception }); };
    socket.once('exception', onException);
    socket.emit(event, data, (ack: unknown) => { socket.off('exception', onException); resolve({ ack }); });
  });
}

test('auth: { token }: granted and denied messages on one connection', async () => {
  const socket = await connect({ token: alice });
  expect(await send(socket, 'read', { vin: 'WVW1' })).toEqual({ ack: { vin: 'WVW1', sub: 'actor-alice', reference: 'VIN=WVW1' } });
  const denied = await send(socket, 'read', { vin: 'WVW2' });
  // Nest emits an object WsException's payload as is: the problem body the HTTP answer would carry.
  expect(denied).toEqual({ exception: { type: 'about:blank', title: 'Forbidden', status: 403, detail: 'the caller lacks the permission this request needs', code: 'ERR_PERMISSION_DENIED' } });
  expect(await send(socket, 'read', 'not an object')).toMatchObject({ exception: { status: 403, code: 'ERR_PERMISSION_DENIED' } });
  // A public message after a granted one does not inherit its identity.
  expect(await send(socket, 'whoami', {})).toEqual({ ack: { sub: 'actor-alice' } });
  expect(await send(socket, 'ping', {})).toEqual({ ack: { iam: null } });
});

test('the handshake Authorization header works too; no token and a forged one are refused', async () => {
  const byHeader = await connect({ header: `Bearer ${alice}` });
  expect(await send(byHeader, 'whoami', {})).toEqual({ ack: { sub: 'actor-alice' } });
  const anonymous = await connect({});
  expect(await send(anonymous, 'whoami', {})).toMatchObject({ exception: { status: 401, code: 'ERR_TOKEN_MISSING' } });
  const forged = await connect({ token: `${alice.slice(0, -4)}AAAA` });
  const answer = await send(forged, 'whoami', {});
  expect(answer).toMatchObject({ exception: { status: 401, code: 'ERR_TOKEN_INVALID' } });
  expect(JSON.stringify(answer)).not.toContain(alice.split('.')[2]!.slice(0, 20));
});

test('a decorated handler on a gateway without @UseGuards(IamGuard) is enforced', async () => {
  const anonymous = await connect({});
  expect(await send(anonymous, 'bare-read', { vin: 'WVW1' })).toMatchObject({ exception: { status: 401, code: 'ERR_TOKEN_MISSING' } });
  const socket = await connect({ token: alice });
  expect(await send(socket, 'bare-read', { vin: 'WVW2' })).toMatchObject({ exception: { status: 403, code: 'ERR_PERMISSION_DENIED' } });
  expect(await send(socket, 'bare-read', { vin: 'WVW1' })).toEqual({ ack: { vin: 'WVW1', sub: 'actor-alice' } });
});

test('without IamAuthzModule, an application with a decorated gateway refuses to start, naming it', async () => {
  const moduleRef = await Test.createTestingModule({ providers: [BareGateway] }).compile();
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class
  const bare: INestApplication = moduleRef.createNestApplication({ logger: false });
  try {
    await expect(bare.listen(0, '127.0.0.1')).rejects.toThrow(/IamAuthzModule is not imported.*BareGateway\.read/s);
  } finally {
    await bare.close().catch(() => undefined);
  }
});
