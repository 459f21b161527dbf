/**
 * One delivery table: every adapter × every way a refusal is delivered (the default answer, an
 * `onError` that renders the error's own answer, an `onError` that answers nothing, `passErrors`
 * to the framework's error handling) must put the same answer on the wire — status,
 * `WWW-Authenticate` / `Retry-After`, problem+json body — for 401, 403 and 503. Real HTTP.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import express from 'express';
import Koa from 'koa';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { IamAuthzError, type Authorizer } from '../../src/index.js';
import { expressAuthz } from '../../adapters/express/index.js';
import { koaAuthz } from '../../adapters/koa/index.js';
import { fastifyAuthz } from '../../adapters/fastify/index.js';
import { honoAuthz } from '../../adapters/hono/index.js';
import { createFetchGuards } from '../../adapters/fetch/index.js';
import { useIam } from '../helpers/index.js';

type Mode = 'default' | 'onError' | 'silentOnError' | 'passErrors';
type Kind = 'express' | 'koa' | 'fastify' | 'hono' | 'fetch';
const MODES: readonly Mode[] = ['default', 'onError', 'silentOnError', 'passErrors'];
const KINDS: readonly Kind[] = ['express', 'koa', 'fastify', 'hono', 'fetch'];
const OPTIONS = { realm: 'fleet', retryAfterSec: 7 } as const;

const iam = useIam();
/** An IAM that answers 500 to everything. */
const down = useIam({ down: 500 });
let ok: Authorizer;
let policyDown: Authorizer;
let alice: string;

beforeAll(() => {
  // No refetch spacing: every request that needs the IAM asks it.
  const base = { jwks: { minRefreshIntervalMs: 0 }, policy: { minRefreshIntervalMs: 0 } };
  ok = iam.authorizer(base);
  policyDown = iam.authorizer({ ...base, policyUrl: down.policyUrl });
  alice = iam.token({ sub: 'actor-alice', ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] });
});

interface App { url: string; handled: number[]; close(): Promise<void> }

async function listenNode(server: Server, handled: number[]): Promise<App> {
  if (!server.listening) await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    handled,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => { resolve(); }); }),
  };
}

/** One route, `GET /v/:vin` needing READ, in `kind`, delivering refusals the `mode` way. */
async function start(kind: Kind, mode: Mode, authorizer: Authorizer): Promise<App> {
  const handled: number[] = [];
  const passErrors = mode === 'passErrors';
  const silent = mode === 'silentOnError';
  const render = mode === 'onError';
  if (kind === 'express') {
    const app = express();
    const onError = render ? (e: IamAuthzError, _req: express.Request, res: express.Response) => { res.status(e.status).set(e.headers).type('application/problem+json').send(JSON.stringify(e.problemDetails)); }
      : silent ? async () => { await new Promise((r) => setTimeout(r, 1)); } : undefined;
    const { requirePermission } = expressAuthz(authorizer, { ...OPTIONS, passErrors, ...(onError ? { onError } : {}) });
    app.get('/v/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (req) => req.params.vin as string), (_req, res) => { handled.push(1); res.send('ok'); });
    app.use((err: IamAuthzError, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(err.status).set(err.headers).type('application/problem+json').send(JSON.stringify(err.problemDetails));
    });
    return listenNode(app.listen(0, '127.0.0.1'), handled);
  }
  if (kind === 'koa') {
    const app = new Koa();
    app.silent = true;
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (error) {
        const e = error as IamAuthzError;
        ctx.status = e.status;
        ctx.set(e.headers);
        ctx.type = 'application/problem+json';
        ctx.body = JSON.stringify(e.problemDetails);
      }
    });
    const onError = render ? (e: IamAuthzError, ctx: Koa.Context) => { ctx.status = e.status; ctx.set(e.headers); ctx.type = 'application/problem+json'; ctx.body = JSON.stringify(e.problemDetails); }
      : silent ? () => undefined : undefined;
    const { requirePermission } = koaAuthz(authorizer, { ...OPTIONS, passErrors, ...(onError ? { onError } : {}) });
    const guard = requirePermission('vehicle-service', 'READ', 'VIN', (ctx) => ctx.path.split('/')[2]);
    app.use(async (ctx, next) => guard(ctx, async () => { handled.push(1); ctx.body = 'ok'; await next(); }));
    return listenNode(app.listen(0, '127.0.0.1'), handled);
  }
  if (kind === 'fastify') {
    const app = Fastify();
    app.setErrorHandler(async (e: IamAuthzError, _request, reply) => reply.code(e.status).headers(e.headers).type('application/problem+json').send(JSON.stringify(e.problemDetails)));
    const { requirePermission } = fastifyAuthz(authorizer, {
      ...OPTIONS, passErrors,
      ...(render ? { onError: async (e: IamAuthzError, _req: unknown, reply: import('fastify').FastifyReply) => { await reply.code(e.status).headers(e.headers).type('application/problem+json').send(JSON.stringify(e.problemDetails)); } } : {}),
      ...(silent ? { onError: () => undefined } : {}),
    });
    app.get('/v/:vin', { preHandler: requirePermission('vehicle-service', 'READ', 'VIN', (req) => (req.params as { vin: string }).vin) }, async () => { handled.push(1); return 'ok'; });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, handled, close: () => app.close() };
  }
  let fetchHandler: (request: Request) => Promise<Response>;
  if (kind === 'hono') {
    // No app.onError: with passErrors, Hono's default handler must answer from getResponse().
    const app = new Hono();
    const { requirePermission } = honoAuthz(authorizer, {
      ...OPTIONS, passErrors,
      ...(render ? { onError: (e: IamAuthzError) => e.getResponse() } : {}),
      ...(silent ? { onError: (() => undefined) as never } : {}),
    });
    app.get('/v/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (c) => c.req.param('vin')), (c) => { handled.push(1); return c.text('ok'); });
    fetchHandler = async (request) => app.fetch(request);
  } else {
    const { requirePermission } = createFetchGuards(authorizer, {
      ...OPTIONS, passErrors,
      ...(render ? { onError: (e: IamAuthzError) => e.getResponse() } : {}),
      ...(silent ? { onError: (() => undefined) as never } : {}),
    });
    const guard = requirePermission('vehicle-service', 'READ', 'VIN', (r) => new URL(r.url).pathname.split('/')[2]);
    fetchHandler = async (request) => {
      try {
        const result = await guard(request);
        if (result instanceof Response) return result;
      } catch (error) {
        if (error instanceof IamAuthzError) return error.getResponse();
        throw error;
      }
      handled.push(1);
      return new Response('ok');
    };
  }
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: fetchHandler, port: 0, hostname: '127.0.0.1' }, () => { resolve(s); });
  });
  return listenNode(server as Server, handled);
}

const CASES = [
  { name: '401 no token', token: undefined, down: false, status: 401, code: 'ERR_TOKEN_MISSING', challenge: 'Bearer realm="fleet"' },
  { name: '401 bad token', token: 'not-a-jwt', down: false, status: 401, code: 'ERR_TOKEN_INVALID', challenge: 'Bearer realm="fleet", error="invalid_token", error_description="token is not a compact JWS"' },
  { name: '403 denied', token: 'alice', path: '/v/OTHER', down: false, status: 403, code: 'ERR_PERMISSION_DENIED', challenge: 'Bearer realm="fleet", error="insufficient_scope", error_description="the caller lacks the permission this request needs"' },
  { name: '503 policy down', token: 'alice', down: true, status: 503, code: 'ERR_POLICY_UNAVAILABLE' },
] as const;

describe.each(KINDS)('%s', (kind) => {
  describe.each(MODES)('%s', (mode) => {
    const apps: Partial<Record<'ok' | 'down', App>> = {};
    beforeAll(async () => {
      apps.ok = await start(kind, mode, ok);
      apps.down = await start(kind, mode, policyDown);
    });
    afterAll(async () => { await Promise.all(Object.values(apps).map((a) => a.close())); });

    test.each(CASES)('$name', async (c) => {
      const app = apps[c.down ? 'down' : 'ok']!;
      const headers: Record<string, string> = {};
      if (c.token !== undefined) headers.authorization = `Bearer ${c.token === 'alice' ? alice : c.token}`;
      const res = await fetch(`${app.url}${'path' in c ? c.path : '/v/WVW1'}`, { headers });
      const text = await res.text();
      expect({ status: res.status, challenge: res.headers.get('www-authenticate'), retry: res.headers.get('retry-after'), type: res.headers.get('content-type') })
        .toEqual({ status: c.status, challenge: 'challenge' in c ? c.challenge : null, retry: c.status === 503 ? '7' : null, type: expect.stringMatching(/^application\/problem\+json/) });
      const body = JSON.parse(text) as Record<string, unknown>;
      expect(body).toEqual({ type: 'about:blank', title: expect.any(String), status: c.status, detail: expect.any(String), code: c.code });
      expect(text).not.toContain(alice.split('.')[2]);
      expect(app.handled).toEqual([]);
    });
  });
});

test('errors from authenticate() and check() carry their answer with the defaults', async () => {
  const missing = await ok.authenticate(undefined).catch((e: unknown) => e) as IamAuthzError;
  expect(missing.headers).toEqual({ 'www-authenticate': 'Bearer realm="iam"' });
  const res = missing.getResponse();
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(await res.json()).toEqual(missing.problemDetails);
  const denied = await ok.check(`Bearer ${alice}`, { service: 'vehicle-service', permission: 'WRITE', resource: { type: 'VIN', value: 'WVW1' } }).catch((e: unknown) => e) as IamAuthzError;
  expect(denied.status).toBe(403);
  expect(denied.headers['www-authenticate']).toContain('error="insufficient_scope"');
  expect(denied.problemDetails).not.toHaveProperty('decision'); // exposeDecision stays off by default
  const outage = await policyDown.check(`Bearer ${alice}`, { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } }).catch((e: unknown) => e) as IamAuthzError;
  expect(outage.headers).toEqual({ 'retry-after': '5' });
  expect(await outage.getResponse().text()).not.toContain(down.url);
});

test.each([
  ['expressAuthz', (o: object) => expressAuthz(ok, o)],
  ['koaAuthz', (o: object) => koaAuthz(ok, o)],
  ['fastifyAuthz', (o: object) => fastifyAuthz(ok, o)],
  ['honoAuthz', (o: object) => honoAuthz(ok, o)],
  ['createFetchGuards', (o: object) => createFetchGuards(ok, o)],
] as const)('%s refuses onError with passErrors, naming both', (name, make) => {
  expect(() => make({ onError: () => undefined, passErrors: true })).toThrow(new RegExp(`${name}: "onError" and "passErrors" exclude each other`));
});
