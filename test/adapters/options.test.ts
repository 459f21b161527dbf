/** Adapter options: onError, passErrors, the Fastify plugin's lifecycle, construction checks. */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import Koa from 'koa';
import Fastify from 'fastify';
import { beforeAll, expect, test, vi } from 'vitest';
import { IamAuthzError, type Authorizer } from '../../src/index.js';
import { expressAuthz } from '../../adapters/express/index.js';
import { koaAuthz } from '../../adapters/koa/index.js';
import { fastifyAuthz, iamAuthz } from '../../adapters/fastify/index.js';
import { useIam } from '../helpers/index.js';
import { startApp } from './apps.js';

const iam = useIam();
let authorizer: Authorizer;
let alice: string;

beforeAll(() => {
  authorizer = iam.authorizer();
  alice = iam.token();
});

async function serve(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  if (!server.listening) await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => { resolve(); }); }),
  };
}

test('express: passErrors hands the IamAuthzError with status and headers to next(err)', async () => {
  const app = await startApp('express', authorizer, { passErrors: true });
  try {
    const res = await fetch(`${app.url}/vehicle/WVW1`, { method: 'PUT', headers: { authorization: `Bearer ${alice}` } });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(await res.json()).toEqual({ custom: true, message: 'permission WRITE on vehicle-service denied (PERMISSION_NOT_GRANTED)' });
  } finally {
    await app.close();
  }
});

test('express: onError renders the error itself', async () => {
  const onError = vi.fn((err: IamAuthzError, _req: express.Request, res: express.Response) => { res.status(err.status).send(`custom ${err.code}`); });
  const app = express();
  app.get('/x', expressAuthz(authorizer, { onError }).authenticate(), (_req, res) => { res.send('ok'); });
  const s = await serve(app.listen(0, '127.0.0.1'));
  try {
    const res = await fetch(`${s.url}/x`);
    expect(res.status).toBe(401);
    expect(await res.text()).toBe('custom ERR_TOKEN_MISSING');
    expect(onError).toHaveBeenCalledOnce();
  } finally {
    await s.close();
  }
});

test('koa: an onError that answers nothing after earlier middleware set a status and body still refuses', async () => {
  const app = new Koa();
  app.silent = true;
  const onError = vi.fn(() => { /* logs, forgets to answer */ });
  app.use(async (ctx, next) => { ctx.status = 200; ctx.body = 'set early'; await next(); });
  app.use(koaAuthz(authorizer, { onError }).authenticate());
  app.use((ctx) => { ctx.body = 'secret'; });
  const s = await serve(app.listen(0, '127.0.0.1'));
  try {
    const res = await fetch(`${s.url}/x`);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(onError).toHaveBeenCalledOnce();
  } finally {
    await s.close();
  }
});

test('koa: onError renders the error itself; rethrowing hands it to Koa with status and headers', async () => {
  const app = new Koa();
  app.silent = true;
  const { authenticate } = koaAuthz(authorizer, {
    onError: (err, ctx) => {
      if (ctx.path === '/rethrow') throw err;
      ctx.status = err.status;
      ctx.body = `custom ${err.code}`;
    },
  });
  app.use(authenticate());
  app.use((ctx) => { ctx.body = 'ok'; });
  const s = await serve(app.listen(0, '127.0.0.1'));
  try {
    const res = await fetch(`${s.url}/x`);
    expect(res.status).toBe(401);
    expect(await res.text()).toBe('custom ERR_TOKEN_MISSING');
    const rethrown = await fetch(`${s.url}/rethrow`);
    expect(rethrown.status).toBe(401);
    expect(rethrown.headers.get('www-authenticate')).toBe('Bearer realm="iam"');
  } finally {
    await s.close();
  }
});

test('fastify: onError renders the error itself', async () => {
  const app = Fastify();
  const { authenticate } = fastifyAuthz(authorizer, { onError: async (err, _req, reply) => { await reply.code(err.status).send(`custom ${err.code}`); } });
  app.get('/x', { onRequest: authenticate() }, async () => 'ok');
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const res = await fetch(`${url}/x`);
    expect(res.status).toBe(401);
    expect(await res.text()).toBe('custom ERR_TOKEN_MISSING');
  } finally {
    await app.close();
  }
});

test('fastify: an onError that answers nothing never lets the request through (the default answer is sent)', async () => {
  const app = Fastify();
  const handler = vi.fn(() => 'secret');
  const onError = vi.fn(async () => { /* logs, forgets to answer */ });
  const { authenticate } = fastifyAuthz(authorizer, { onError });
  app.get('/x', { onRequest: authenticate() }, handler);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const res = await fetch(`${url}/x`);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.text()).not.toContain('secret');
    expect(onError).toHaveBeenCalledOnce();
    expect(handler).not.toHaveBeenCalled();
  } finally {
    await app.close();
  }
});

test('fastify plugin: decorates request.iam, exposes app.iamAuthz, closes the authorizer on close', async () => {
  const own = iam.authorizer();
  const close = vi.spyOn(own, 'close');
  const app = Fastify();
  await app.register(iamAuthz, { authorizer: own, realm: 'fleet' });
  app.get('/before', async (req) => ({ iam: req.iam }));
  app.get('/vehicle/:vin', { preHandler: app.iamAuthz.requirePermission('vehicle-service', 'READ', 'VIN', (req) => (req.params as { vin: string }).vin) }, async (req) => ({ sub: req.iam?.claims.sub }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  expect(await (await fetch(`${url}/before`)).json()).toEqual({ iam: null });
  expect(await (await fetch(`${url}/vehicle/WVW1`, { headers: { authorization: `Bearer ${alice}` } })).json()).toEqual({ sub: 'actor-alice' });
  const denied = await fetch(`${url}/vehicle/WVW1`);
  expect(denied.headers.get('www-authenticate')).toBe('Bearer realm="fleet"');
  await app.close();
  expect(close).toHaveBeenCalledOnce();
});

test('guards validate their arguments at construction', () => {
  const { requirePermission } = expressAuthz(authorizer);
  expect(() => requirePermission('', 'READ', 'VIN', () => 'x')).toThrow(TypeError);
  expect(() => requirePermission('svc', '', 'VIN', () => 'x')).toThrow(TypeError);
  expect(() => requirePermission('svc', 'READ', 'VIN=X', () => 'x')).toThrow(/without "="/);
  expect(() => requirePermission('svc', 'READ', 'VIN', undefined as never)).toThrow(/resolver/);
  expect(() => expressAuthz(authorizer, { realm: 'bad\nrealm' })).toThrow(/realm/);
  expect(() => koaAuthz({} as Authorizer)).toThrow(/Authorizer/);
  expect(() => fastifyAuthz(authorizer, { retryAfterSec: -1 })).toThrow(/retryAfterSec/);
});
