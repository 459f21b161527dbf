/**
 * `auditRoutes` of iam-authz/koa reads a `@koa/router` 15 route table (or the Koa application
 * mounting it): the application every framework is audited on gives exactly EXPECTED_AUDIT, and
 * each case below is one a naive reader of the route table gets wrong. Every audit is checked
 * against what the app really does over HTTP on 127.0.0.1: a route the audit calls guarded answers
 * 401 without a token, one it calls unguarded runs its handler.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import express from 'express';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { auditRoutes, koaAuthz } from '../../adapters/koa/index.js';
import type { Authorizer } from '../../src/index.js';
import { useIam } from '../helpers/index.js';
import { EXPECTED_AUDIT, SERVICE } from './audit-expected.js';

const iam = useIam();
let authorizer: Authorizer;
/** DRIVER on VIN=WVW1: reads WVW1, nothing else. */
let alice: string;

beforeAll(async () => {
  authorizer = iam.authorizer();
  alice = iam.token();
});
afterAll(async () => {
  await authorizer.close();
});

const reply = (ctx: Koa.Context) => { ctx.body = { handled: ctx.path }; };
const vin = (ctx: Koa.Context) => ctx.params.vin as string;

/** The application of audit-expected.ts, the Koa way: a nested router with its group guard. */
function expectedApp() {
  const { authenticate, requirePermission, publicRoute } = koaAuthz(authorizer);
  const router = new Router();
  router.get('/vehicle/:vin', requirePermission(SERVICE, 'READ', 'VIN', vin), reply);
  router.put('/vehicle/:vin', requirePermission(SERVICE, 'WRITE', 'VIN', vin), reply);
  router.get('/depots/:depotId', requirePermission(SERVICE, 'READ', { node: () => 'N-ROOT' }), reply);
  router.get('/me', authenticate(), reply);
  router.get('/health', publicRoute(), reply);
  router.get('/admin/export', reply);
  // `sensitive`: without it @koa/router 15 matches the group guard's path case-sensitively and the
  // routes not, so /FLEET/summary would skip the guard (see "case" below).
  const fleet = new Router({ sensitive: true });
  fleet.use(authenticate());
  fleet.get('/vehicles/:vin', requirePermission(SERVICE, 'READ', 'VIN', vin), reply);
  fleet.get('/summary', reply);
  router.use('/fleet', fleet.routes());
  const app = new Koa();
  app.silent = true;
  app.use(router.routes()).use(router.allowedMethods());
  return { app, router };
}

interface Running { status(method: string, path: string, token?: string): Promise<number>; close(): Promise<void> }

async function serve(app: Koa): Promise<Running> {
  const handle = app.callback();
  const server: Server = createServer((req, res) => { void handle(req, res); });
  await new Promise<void>((resolve) => { server.listen(0, '127.0.0.1', resolve); });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    async status(method, path, token) {
      const res = await fetch(`${url}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
      await res.arrayBuffer();
      return res.status;
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => { resolve(); }); }),
  };
}

type Access = 'permission' | 'authenticated' | 'public' | 'unguarded';

/** `[method, OpenAPI path, access]` of each route, in the audit's order. */
function accessOf(target: Parameters<typeof auditRoutes>[0]): [string, string, Access][] {
  return auditRoutes(target).routes.map((r) => [r.method, r.path, r.access]);
}

/** Without a token, each `[method, url]` answers 401 when `guarded`, else runs its handler (200). */
async function expectTokenless(app: Koa, cases: [method: string, url: string, guarded: boolean][]) {
  const running = await serve(app);
  try {
    const seen = await Promise.all(cases.map(async ([method, url]) => running.status(method, url)));
    expect(seen).toEqual(cases.map(([, , guarded]) => (guarded ? 401 : 200)));
  } finally {
    await running.close();
  }
}

function koaApp(...routers: Router[]): Koa {
  const app = new Koa();
  app.silent = true;
  for (const router of routers) app.use(router.routes());
  return app;
}

describe('the application every framework is audited on', () => {
  test('auditRoutes(router) is exactly EXPECTED_AUDIT; so are auditRoutes(router.routes()) and auditRoutes(app)', () => {
    const { app, router } = expectedApp();
    expect(auditRoutes(router)).toStrictEqual(EXPECTED_AUDIT);
    expect(auditRoutes(router.routes())).toStrictEqual(EXPECTED_AUDIT);
    expect(auditRoutes(app)).toStrictEqual(EXPECTED_AUDIT);
    expect(JSON.parse(JSON.stringify(auditRoutes(router)))).toStrictEqual(EXPECTED_AUDIT);
  });

  test("throwOn: ['unguarded'] names GET /admin/export and no other route", () => {
    const { router } = expectedApp();
    const error = catching(() => auditRoutes(router, { throwOn: ['unguarded'] }));
    expect(error.message).toBe('auditRoutes: 1 route to fix (unguarded): GET /admin/export');
    expect(error).toMatchObject({ code: 'ERR_ROUTE_AUDIT', findings: [EXPECTED_AUDIT.findings[0]] });
  });

  test("throwOn: ['unscoped-parameter'] names GET /depots/{depotId} and no other route", () => {
    const { router } = expectedApp();
    const error = catching(() => auditRoutes(router, { throwOn: ['unscoped-parameter'] }));
    expect(error.message).toBe('auditRoutes: 1 route to fix (unscoped-parameter): GET /depots/{depotId}');
    expect(() => auditRoutes(router, { throwOn: [] })).not.toThrow();
  });

  test('it answers 200/401/403 as it did before auditing; the route table is untouched', async () => {
    const { app, router } = expectedApp();
    const requests: [string, string, string?][] = [
      ['GET', '/vehicle/WVW1', alice], ['GET', '/vehicle/WVW1'], ['GET', '/vehicle/WVW2', alice], ['PUT', '/vehicle/WVW1', alice],
      ['GET', '/depots/D1', alice], ['GET', '/me', alice], ['GET', '/me'], ['GET', '/health'], ['GET', '/admin/export'],
      ['GET', '/fleet/summary'], ['GET', '/fleet/summary', alice], ['GET', '/FLEET/summary'], ['GET', '/fleet/vehicles/WVW1', alice],
      ['GET', '/fleet/vehicles/WVW2', alice], ['HEAD', '/me'], ['OPTIONS', '/me'], ['DELETE', '/me'],
    ];
    const running = await serve(app);
    try {
      const answers = () => Promise.all(requests.map(([method, path, token]) => running.status(method, path, token)));
      const before = await answers();
      expect(before).toEqual([200, 401, 403, 403, 403, 200, 401, 200, 200, 401, 200, 404, 200, 403, 401, 200, 405]);
      const stack = [...router.stack];
      const layers = router.stack.map((l) => ({ path: l.path, regexp: l.regexp, lastIndex: l.regexp.lastIndex, methods: [...l.methods], stack: [...l.stack] }));
      for (let i = 0; i < 3; i++) auditRoutes(app);
      expect(() => auditRoutes(router, { throwOn: ['unguarded', 'unscoped-parameter'] })).toThrow();
      expect(router.stack).toEqual(stack);
      expect(router.stack.map((l) => ({ path: l.path, regexp: l.regexp, lastIndex: l.regexp.lastIndex, methods: [...l.methods], stack: [...l.stack] }))).toEqual(layers);
      expect(await answers()).toEqual(before);
    } finally {
      await running.close();
    }
  });
});

describe('the route table of @koa/router 15, read as the router runs it', () => {
  test('a router.use() guard counts only for the routes registered after it: one registered before answers first', async () => {
    const { authenticate } = koaAuthz(authorizer);
    const router = new Router();
    router.get('/early', reply);
    router.use(authenticate());
    router.get('/late', reply);
    expect(accessOf(router)).toEqual([['GET', '/early', 'unguarded'], ['GET', '/late', 'authenticated']]);
    expect(auditRoutes(router).findings[0]?.message).toMatch(/^GET \/early: .*router\.use\(\) after it/);
    await expectTokenless(koaApp(router), [['GET', '/early', false], ['GET', '/late', true]]);
  });

  test('case: a router.use() guard in a prefixed or mounted router is matched case-sensitively, its routes not', async () => {
    const { authenticate } = koaAuthz(authorizer);
    const fleet = new Router();
    fleet.use(authenticate());
    fleet.get('/summary', reply);
    const api = new Router({ prefix: '/api' });
    api.use(authenticate());
    api.get('/status', reply);
    const safe = new Router({ prefix: '/safe', sensitive: true });
    safe.use(authenticate());
    safe.get('/status', reply);
    // The Express way round: the guard on the mount path is matched like the routes.
    const depots = new Router();
    depots.get('/list', reply);
    const router = new Router();
    router.use('/fleet', fleet.routes());
    router.use('/depots', authenticate(), depots.routes());
    expect(accessOf(koaApp(router, api, safe))).toEqual([
      ['GET', '/api/status', 'unguarded'],
      ['GET', '/depots/list', 'authenticated'],
      ['GET', '/fleet/summary', 'unguarded'],
      ['GET', '/safe/status', 'authenticated'],
    ]);
    const { findings } = auditRoutes(router);
    expect(findings.map((f) => f.message)).toEqual([expect.stringMatching(/^GET \/fleet\/summary: a guard .* does not run for every path .* \/FLEET\/SUMMARY .*sensitive: true/)]);
    await expectTokenless(koaApp(router, api, safe), [
      ['GET', '/fleet/summary', true], ['GET', '/FLEET/summary', false], ['GET', '/api/status', true], ['GET', '/API/status', false],
      ['GET', '/DEPOTS/list', true], ['GET', '/safe/status', true],
    ]);
  });

  test('nested routers several levels deep, with prefixes from new Router({ prefix }), router.prefix() and mount paths', async () => {
    const { authenticate, requirePermission } = koaAuthz(authorizer);
    const parts = new Router({ sensitive: true });
    parts.get('/:partId', requirePermission(SERVICE, 'READ', { node: (ctx) => ctx.params.partId as string }), reply);
    const vehicles = new Router({ prefix: '/vehicles', sensitive: true });
    vehicles.use(authenticate());
    vehicles.get('/', reply);
    vehicles.use('/:vin/parts', parts.routes());
    const v1 = new Router({ sensitive: true });
    v1.use(vehicles.routes());
    v1.get('/ping', reply);
    const api = new Router({ sensitive: true });
    api.use('/v1', v1.routes());
    api.get('/', reply);
    api.prefix('/api');
    expect(accessOf(api)).toEqual([
      ['GET', '/api', 'unguarded'],
      ['GET', '/api/v1/ping', 'unguarded'],
      ['GET', '/api/v1/vehicles', 'authenticated'],
      ['GET', '/api/v1/vehicles/{vin}/parts/{partId}', 'permission'],
    ]);
    await expectTokenless(koaApp(api), [
      ['GET', '/api', false], ['GET', '/api/v1/ping', false], ['GET', '/api/v1/vehicles', true], ['GET', '/api/v1/vehicles/W/parts/P', true],
    ]);
  });

  test("a group guard covers its router's paths, not a sibling path that merely starts the same (/fleet, /fleetwood)", async () => {
    const { authenticate } = koaAuthz(authorizer);
    const fleet = new Router({ sensitive: true });
    fleet.use(authenticate());
    fleet.get('/', reply);
    const router = new Router({ sensitive: true });
    router.use('/fleet', fleet.routes());
    router.get('/fleetwood', reply);
    router.use('/admin', authenticate());
    router.get('/admin/users', reply);
    router.get('/administrators', reply);
    expect(accessOf(router)).toEqual([
      ['GET', '/admin/users', 'authenticated'], ['GET', '/administrators', 'unguarded'], ['GET', '/fleet', 'authenticated'], ['GET', '/fleetwood', 'unguarded'],
    ]);
    await expectTokenless(koaApp(router), [['GET', '/fleet', true], ['GET', '/fleetwood', false], ['GET', '/admin/users', true], ['GET', '/administrators', false]]);
  });

  test('a nested router is copied when mounted: routes added to it later are neither served nor listed', async () => {
    const fleet = new Router();
    fleet.get('/early', reply);
    const router = new Router();
    router.use('/fleet', fleet.routes());
    fleet.get('/late', reply);
    expect(accessOf(router)).toEqual([['GET', '/fleet/early', 'unguarded']]);
    const running = await serve(koaApp(router));
    try {
      expect([await running.status('GET', '/fleet/early'), await running.status('GET', '/fleet/late')]).toEqual([200, 404]);
    } finally {
      await running.close();
    }
  });

  test('router.prefix() replacing a prefix leaves a router.use() guard at the old one: the audit follows the router', async () => {
    const { authenticate } = koaAuthz(authorizer);
    const router = new Router({ prefix: '/old', sensitive: true });
    router.use(authenticate());
    router.get('/x', reply);
    router.prefix('/new');
    expect(accessOf(router)).toEqual([['GET', '/new/x', 'unguarded']]);
    await expectTokenless(koaApp(router), [['GET', '/new/x', false]]);
  });

  test('methods: router.all is one entry per OpenAPI method; the HEAD of a GET is left out, an explicit HEAD or OPTIONS is not', () => {
    const { authenticate } = koaAuthz(authorizer);
    const router = new Router();
    router.all('/hook', authenticate(), reply);
    router.get('/page', reply);
    router.head('/probe', reply);
    router.options('/page', reply);
    router.register('/cache', ['purge'], [authenticate(), reply]);
    expect(accessOf(router)).toEqual([
      ['PURGE', '/cache', 'authenticated'],
      ...['DELETE', 'GET', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE'].map((m): [string, string, Access] => [m, '/hook', 'authenticated']),
      ['GET', '/page', 'unguarded'], ['OPTIONS', '/page', 'unguarded'],
      ['HEAD', '/probe', 'unguarded'],
    ]);
  });

  test('several handlers on a route, named routes, a guard-only layer before the handler, the same route twice', async () => {
    const { authenticate, requirePermission } = koaAuthz(authorizer);
    const router = new Router({ sensitive: true });
    const load = async (_ctx: Koa.Context, next: Koa.Next) => { await next(); };
    router.get('vehicle', '/vehicle/:vin', load, requirePermission(SERVICE, 'READ', 'VIN', vin), requirePermission(SERVICE, 'WRITE', 'VIN', vin), reply);
    router.all('/admin/*rest', authenticate());
    router.get('/admin/users', reply);
    router.get('/twice', reply);
    router.get('/twice', authenticate(), reply);
    expect(auditRoutes(router).routes).toStrictEqual([
      { method: 'GET', path: '/admin/users', access: 'authenticated', permissions: [] },
      { method: 'GET', path: '/twice', access: 'unguarded', permissions: [] },
      { method: 'GET', path: '/vehicle/{vin}', access: 'permission', permissions: [{ service: SERVICE, permission: 'READ', resourceType: 'VIN' }, { service: SERVICE, permission: 'WRITE', resourceType: 'VIN' }] },
      ...['DELETE', 'GET', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE'].map((method) => ({ method, path: '/admin/{rest}', access: 'authenticated', permissions: [] })),
    ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.method < b.method ? -1 : 1)));
    expect(router.url('vehicle', { vin: 'WVW1' })).toBe('/vehicle/WVW1');
    await expectTokenless(koaApp(router), [['GET', '/admin/users', true], ['GET', '/twice', false], ['GET', '/vehicle/WVW1', true]]);
  });

  test('path syntax of path-to-regexp 8 in OpenAPI form; RegExp paths listed by their source', () => {
    const router = new Router();
    router.get('/reports{/:year}', reply);
    router.get('/files/*path', reply);
    router.get('/img/:name{.:ext}', reply);
    router.get('/q/:"quoted-name"', reply);
    router.get(/^\/legacy\/(\d+)$/, reply);
    router.get('/', reply);
    expect(accessOf(router).map(([, path]) => path)).toEqual([
      '/', '/^\\/legacy\\/(\\d+)$/', '/files/{path}', '/img/{name}.{ext}', '/q/{quoted-name}', '/reports/{year}',
    ]);
    // path-to-regexp 8 refuses the older forms outright: they never reach a route table.
    expect(() => new Router().get('/:id(\\d+)', reply)).toThrow(/Unexpected \(/);
    expect(() => new Router().get('/:opt?', reply)).toThrow(/Unexpected \?/);
  });

  test('an optional segment, a wildcard, a RegExp path: a group guard counts only if it runs for every form', async () => {
    const { authenticate } = koaAuthz(authorizer);
    const router = new Router({ sensitive: true });
    router.use('/reports/:year', authenticate());
    router.get('/reports{/:year}', reply);
    router.use('/files', authenticate());
    router.get('/files/*path', reply);
    const root = new Router();
    root.use(authenticate());
    root.get(/^\/legacy\/\d+$/, reply);
    expect(accessOf(koaApp(router, root))).toEqual([
      ['GET', '/^\\/legacy\\/\\d+$/', 'authenticated'], ['GET', '/files/{path}', 'authenticated'], ['GET', '/reports/{year}', 'unguarded'],
    ]);
    await expectTokenless(koaApp(router, root), [['GET', '/reports', false], ['GET', '/reports/2026', true], ['GET', '/files/a/b', true], ['GET', '/legacy/7', true]]);
  });

  test("middleware that is not ours counts for nothing, whatever it is called or does", async () => {
    const router = new Router();
    router.use(async function authenticate(ctx: Koa.Context, next: Koa.Next) { if (ctx.get('x-nobody')) return; await next(); });
    router.get('/mine', async function requirePermission(_ctx: Koa.Context, next: Koa.Next) { await next(); }, reply);
    expect(accessOf(router)).toEqual([['GET', '/mine', 'unguarded']]);
    await expectTokenless(koaApp(router), [['GET', '/mine', false]]);
  });

  test('an exclusive router runs only the matched route: its router.use() guards count for nothing', async () => {
    const { authenticate } = koaAuthz(authorizer);
    const router = new Router({ exclusive: true });
    router.use(authenticate());
    router.get('/open', reply);
    router.get('/own', authenticate(), reply);
    expect(accessOf(router)).toEqual([['GET', '/open', 'unguarded'], ['GET', '/own', 'authenticated']]);
    await expectTokenless(koaApp(router), [['GET', '/open', false], ['GET', '/own', true]]);
  });

  test('app.use(guard): counted when auditing the Koa app (before the router only), unseen from the router', async () => {
    const { authenticate } = koaAuthz(authorizer);
    const first = new Router();
    first.get('/first', reply);
    const second = new Router();
    second.get('/second', reply);
    second.get('/first', authenticate(), reply);
    const app = new Koa();
    app.silent = true;
    app.use(first.routes()).use(authenticate()).use(second.routes()).use(first.routes());
    expect(accessOf(app)).toEqual([['GET', '/first', 'unguarded'], ['GET', '/second', 'authenticated']]);
    expect(accessOf(second)).toEqual([['GET', '/first', 'authenticated'], ['GET', '/second', 'unguarded']]);
    await expectTokenless(app, [['GET', '/first', false], ['GET', '/second', true]]);
  });

  test('anything but a router, its routes() or a Koa app mounting one is a TypeError saying what to pass', () => {
    const koa = /auditRoutes: pass the @koa\/router Router your Koa app mounts/;
    for (const wrong of [undefined, null, {}, 'router', express(), express.Router(), () => undefined, { stack: [] }]) {
      expect(() => auditRoutes(wrong as never)).toThrow(koa);
    }
    expect(() => auditRoutes(new Koa().use(async (_ctx, next) => { await next(); }))).toThrow(/no @koa\/router router is mounted on this Koa app/);
    expect(() => auditRoutes(new Router(), { throwOn: ['everything'] } as never)).toThrow(TypeError);
    expect(() => auditRoutes(new Router(), { strict: true } as never)).toThrow(/unknown option "strict"/);
    expect(auditRoutes(new Router())).toStrictEqual({ routes: [], findings: [] });
  });
});

function catching(run: () => unknown): Error & { code?: string } {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}
