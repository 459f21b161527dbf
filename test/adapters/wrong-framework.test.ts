/**
 * A guard mounted in the wrong framework (the Express guard in Koa, the Koa guard in Express, …)
 * answers 500 application/problem+json naming the subpath to use, never runs the handler, never
 * crashes the process, and warns once per process — with or without a token. Every pairing that
 * can be mounted at all, over real HTTP on 127.0.0.1.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import express4 from 'express4';
import Koa from 'koa';
import Router from '@koa/router';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Authorizer } from '../../src/index.js';
import { expressAuthz } from '../../adapters/express/index.js';
import { koaAuthz } from '../../adapters/koa/index.js';
import { fastifyAuthz } from '../../adapters/fastify/index.js';
import { honoAuthz } from '../../adapters/hono/index.js';
import { createFetchGuards } from '../../adapters/fetch/index.js';
import { useIam } from '../helpers/index.js';

type Own = 'express' | 'koa' | 'fastify' | 'hono' | 'fetch';
type Host = 'express' | 'express4' | 'koa' | 'fastify' | 'hono';

const iam = useIam();
let authorizer: Authorizer;
let alice: string;

const warnings: Error[] = [];
const crashes: unknown[] = [];
const onWarning = (warning: Error) => { if ((warning as Error & { code?: string }).code === 'IAM_AUTHZ_WRONG_FRAMEWORK') warnings.push(warning); };
const onCrash = (error: unknown) => { crashes.push(error); };

beforeAll(() => {
  process.on('warning', onWarning);
  process.on('unhandledRejection', onCrash);
  process.on('uncaughtException', onCrash);
  authorizer = iam.authorizer();
  alice = iam.token();
});
afterAll(() => {
  process.off('warning', onWarning);
  process.off('unhandledRejection', onCrash);
  process.off('uncaughtException', onCrash);
});

/** One guard of each kind an adapter makes, typed loosely: it is about to be misused. */
function guardsOf(own: Own): unknown[] {
  const vin = () => 'WVW1';
  const make = {
    express: () => expressAuthz(authorizer),
    koa: () => koaAuthz(authorizer),
    fastify: () => fastifyAuthz(authorizer),
    hono: () => honoAuthz(authorizer),
    fetch: () => createFetchGuards(authorizer),
  }[own]() as { authenticate: (o?: object) => unknown; requirePermission: (...a: unknown[]) => unknown; requireAnyPermission: (...a: unknown[]) => unknown };
  return [
    make.authenticate(),
    make.authenticate({ optional: true }),
    make.requirePermission('vehicle-service', 'READ', 'VIN', vin),
    make.requireAnyPermission('vehicle-service', ['WRITE', 'READ'], { node: vin }),
  ];
}

interface Mounted { url: string; handled: { count: number }; errors: unknown[]; close(): Promise<void> }

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => { resolve(); }));
}

/** Serves `guards[i]` before a handler at `/g/<i>` in `host`. */
async function mount(host: Host, guards: unknown[]): Promise<Mounted> {
  const handled = { count: 0 };
  const errors: unknown[] = [];
  if (host === 'express' || host === 'express4') {
    const app = (host === 'express' ? express : express4)();
    guards.forEach((guard, i) => {
      app.get(`/g/${i}`, guard as express.RequestHandler, (_req: express.Request, res: express.Response) => { handled.count++; res.send('handled'); });
    });
    app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => { errors.push(error); res.status(599).end(); });
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, handled, errors, close: () => closeServer(server) };
  }
  if (host === 'koa') {
    const app = new Koa();
    app.on('error', (error: unknown) => { errors.push(error); });
    const router = new Router();
    guards.forEach((guard, i) => {
      router.get(`/g/${i}`, guard as Koa.Middleware, (ctx) => { handled.count++; ctx.body = 'handled'; });
    });
    app.use(router.routes());
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, handled, errors, close: () => closeServer(server) };
  }
  if (host === 'fastify') {
    const app = Fastify();
    app.setErrorHandler(async (error, _request, reply) => { errors.push(error); return reply.code(599).send(); });
    guards.forEach((guard, i) => {
      // As onRequest for half of them, as preHandler for the rest.
      const hook = i % 2 === 0 ? { onRequest: guard as never } : { preHandler: guard as never };
      app.get(`/g/${i}`, hook, async () => { handled.count++; return 'handled'; });
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, handled, errors, close: () => app.close() };
  }
  const app = new Hono();
  app.onError((error, c) => { errors.push(error); return c.text('error', 599 as never); });
  guards.forEach((guard, i) => {
    app.get(`/g/${i}`, guard as never, (c) => { handled.count++; return c.text('handled'); });
  });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => { resolve(s); });
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    handled,
    errors,
    close: () => new Promise((resolve) => {
      if ('closeAllConnections' in server) server.closeAllConnections();
      server.close(() => { resolve(); });
    }),
  };
}

const subpath = (host: Host) => `iam-authz/${host === 'express4' ? 'express' : host}`;

// Express↔Koa both ways first (the cases), then every other pairing that can be mounted.
const PAIRINGS: [own: Own, host: Host][] = [
  ['express', 'koa'], ['koa', 'express'], ['koa', 'express4'],
  ['express', 'fastify'], ['express', 'hono'],
  ['koa', 'fastify'], ['koa', 'hono'],
  ['fastify', 'express'], ['fastify', 'express4'], ['fastify', 'koa'], ['fastify', 'hono'],
  ['hono', 'express'], ['hono', 'express4'], ['hono', 'koa'], ['hono', 'fastify'],
  ['fetch', 'express'], ['fetch', 'koa'], ['fetch', 'fastify'], ['fetch', 'hono'],
];

describe.each(PAIRINGS)('the %s guard in %s', (own, host) => {
  test('answers 500 problem+json naming the right subpath, with or without a token; the handler never runs; nothing crashes', async () => {
    const guards = guardsOf(own);
    const app = await mount(host, guards);
    try {
      for (let i = 0; i < guards.length; i++) {
        for (const authorization of [undefined, `Bearer ${alice}`, 'Bearer not-a-token', 'Basic eDp5']) {
          const res = await fetch(`${app.url}/g/${i}`, { headers: authorization === undefined ? {} : { authorization }, signal: AbortSignal.timeout(5000) });
          const text = await res.text();
          expect(res.status, `guard ${i}, ${authorization ?? 'no token'}: ${text}`).toBe(500);
          expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
          const body = JSON.parse(text) as Record<string, unknown>;
          expect(body).toMatchObject({ type: 'about:blank', title: 'Internal Server Error', status: 500, code: 'ERR_WRONG_FRAMEWORK' });
          expect(body.detail).toContain(subpath(host));
          expect(body.detail).toContain(`iam-authz/${own}`);
          expect(Object.keys(body).sort()).toStrictEqual(['code', 'detail', 'status', 'title', 'type']);
          expect(text).not.toMatch(/\n\s+at |stack/);
          expect(text).not.toContain(alice);
        }
      }
      // HEAD too: no crash, no handler.
      const head = await fetch(`${app.url}/g/0`, { method: 'HEAD', signal: AbortSignal.timeout(5000) });
      expect(head.status).toBe(500);
      await new Promise((resolve) => setImmediate(resolve));
      expect(app.handled.count).toBe(0);
      expect(app.errors).toStrictEqual([]);
      expect(crashes).toStrictEqual([]);
    } finally {
      await app.close();
    }
  });
});

test('one process warning for all those requests, with the stable code, naming a subpath', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  expect(warnings).toHaveLength(1);
  const [warning] = warnings as [Error];
  expect(warning.name).toBe('Warning');
  // The first pairing run: the Express guard in Koa.
  expect(warning.message).toContain('iam-authz/express');
  expect(warning.message).toContain('iam-authz/koa');
  expect(crashes).toStrictEqual([]);
});

test('an adapter handler called with arguments of no known framework throws a TypeError naming it', async () => {
  const [expressGuard] = guardsOf('express') as [(...a: unknown[]) => unknown];
  expect(() => expressGuard({}, {})).toThrow(/expressAuthz: .*iam-authz\/express/);
  const [koaGuard] = guardsOf('koa') as [(...a: unknown[]) => Promise<unknown>];
  await expect(koaGuard({})).rejects.toThrow(/koaAuthz: .*iam-authz\/koa/);
});
