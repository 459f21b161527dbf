/**
 * `auditRoutes(app)` from `iam-authz/hono`: the one application of audit-expected.ts built the Hono
 * way gives exactly EXPECTED_AUDIT; then what Hono's route table makes easy to get wrong (which
 * `app.use` middleware runs for which route, and in what order; sub-apps, base paths, `app.on`,
 * `app.all`, Hono's path syntax); and the app answers the same, over real HTTP, once audited.
 */
import { fileURLToPath } from 'node:url';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { startDevIam, type DevIam } from 'iam-authz-dev';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer, type Authorizer } from '../../src/index.js';
import type { RouteAudit } from '../../src/adapter/index.js';
import { auditRoutes, honoAuthz, type HonoAuthz } from '../../adapters/hono/index.js';
import { listen } from './apps-fetch.js';
import { EXPECTED_AUDIT, SERVICE } from './audit-expected.js';
import { thrownBy as thrown } from '../helpers/errors.js';

const config = fileURLToPath(new URL('../../examples/vehicle-service/iam.json', import.meta.url));
let iam: DevIam;
let authorizer: Authorizer;
let authz: HonoAuthz;

beforeAll(async () => {
  iam = await startDevIam({ config, console: false });
  authorizer = createAuthorizer({ baseUrl: iam.baseUrl });
  authz = honoAuthz(authorizer);
});
afterAll(async () => {
  await authorizer.close();
  await iam.close();
});

const reply = (c: Context): Response => c.json({ path: c.req.path, sub: c.get('iam')?.claims.sub ?? null });
const vin = (c: Context): string => c.req.param('vin') ?? '';
/** A user's own middleware: in the route table, but no guard of ours. */
const requestLog: MiddlewareHandler = async function requestLog(_c, next) { await next(); };

/** The application of audit-expected.ts, in Hono's idiom: a group guard on `/fleet/*`, the fleet a sub-app. */
function vehicleApp(): Hono {
  const { authenticate, requirePermission, publicRoute } = authz;
  const app = new Hono();
  app.use(requestLog);
  app.get('/vehicle/:vin', requirePermission(SERVICE, 'READ', 'VIN', vin), reply);
  app.put('/vehicle/:vin', requirePermission(SERVICE, 'WRITE', 'VIN', vin), reply);
  app.get('/depots/:depotId', requirePermission(SERVICE, 'READ', { node: () => 'N-ROOT' }), reply);
  app.get('/me', authenticate(), reply);
  app.get('/health', publicRoute(), reply);
  app.get('/admin/export', reply);
  const fleet = new Hono();
  fleet.get('/vehicles/:vin', requirePermission(SERVICE, 'READ', 'VIN', vin), reply);
  fleet.get('/summary', reply);
  app.use('/fleet/*', authenticate());
  app.route('/fleet', fleet);
  return app;
}

/** `{ 'METHOD /path': access }` of an audit, for the edge cases. */
const accessOf = (audit: RouteAudit): Record<string, string> => Object.fromEntries(audit.routes.map((r) => [`${r.method} ${r.path}`, r.access]));

describe('auditRoutes (Hono)', () => {
  test('the expected application: exactly EXPECTED_AUDIT, plain JSON', () => {
    const audit = auditRoutes(vehicleApp());
    expect(audit).toStrictEqual(EXPECTED_AUDIT);
    expect(JSON.parse(JSON.stringify(audit))).toStrictEqual(audit);
  });

  test('throwOn names the offending routes as METHOD /path, and no other', () => {
    const unguarded = thrown(() => auditRoutes(vehicleApp(), { throwOn: ['unguarded'] }));
    expect(unguarded.message).toContain('GET /admin/export');
    expect(unguarded.message.match(/(GET|PUT) \//g)).toEqual(['GET /']);
    expect(unguarded).toMatchObject({ code: 'ERR_ROUTE_AUDIT' });
    const unscoped = thrown(() => auditRoutes(vehicleApp(), { throwOn: ['unscoped-parameter'] }));
    expect(unscoped.message).toContain('GET /depots/{depotId}');
    expect(unscoped.message.match(/(GET|PUT) \//g)).toEqual(['GET /']);
  });

  test('a wrong argument is a TypeError saying what to pass; bad options are refused', () => {
    for (const wrong of [undefined, null, {}, () => undefined, { routes: [], fetch: () => undefined }, new Hono().routes]) {
      expect(() => auditRoutes(wrong as never)).toThrow(TypeError);
    }
    expect(() => auditRoutes({} as never)).toThrow(/auditRoutes: pass a Hono app/);
    expect(() => auditRoutes(new Hono(), { throwOn: ['everything'] } as never)).toThrow(/"throwOn"/);
    expect(() => auditRoutes(new Hono(), { thrownOn: [] } as never)).toThrow(/unknown option "thrownOn"/);
  });
});

describe('which middleware guards which route, as Hono runs it', () => {
  test('app.use("/fleet/*") covers /fleet itself and below it, not /fleetx; a global app.use() covers all', () => {
    const { authenticate, publicRoute } = authz;
    const app = new Hono();
    app.use('/fleet/*', authenticate());
    app.get('/fleet', reply).get('/fleet/a/b', reply).get('/fleetx', reply);
    const open = new Hono().use(publicRoute());
    open.get('/', reply).get('/x/:id', reply);
    expect(accessOf(auditRoutes(app))).toStrictEqual({ 'GET /fleet': 'authenticated', 'GET /fleet/a/b': 'authenticated', 'GET /fleetx': 'unguarded' });
    expect(accessOf(auditRoutes(open))).toStrictEqual({ 'GET /': 'public', 'GET /x/{id}': 'public' });
  });

  test('a route registered twice, open and then guarded: the open one answers first, so it is unguarded', () => {
    const app = new Hono();
    app.get('/twice', reply);
    app.get('/twice', authz.authenticate(), reply);
    expect(accessOf(auditRoutes(app))).toStrictEqual({ 'GET /twice': 'unguarded' });
  });

  test('middleware registered after a route does not guard it: Hono runs it only if the route calls next()', () => {
    const app = new Hono();
    app.get('/early', reply);
    app.use(authz.authenticate());
    app.get('/later', reply);
    expect(accessOf(auditRoutes(app))).toStrictEqual({ 'GET /early': 'unguarded', 'GET /later': 'authenticated' });
  });

  test('a sub-app: its own app.use() guard and routes carry the mount prefix, through onError wrapping and basePath', () => {
    const { authenticate, requirePermission } = authz;
    const fleet = new Hono();
    fleet.use(authenticate());
    fleet.get('/summary', reply);
    // With its own onError, Hono wraps each handler of the sub-app when it is mounted.
    fleet.onError((_e, c) => c.text('fleet error', 500));
    const api = new Hono<{ Variables: { tenant: string } }>().basePath('/api');
    api.get('/vehicle/:vin', requirePermission(SERVICE, 'READ', 'VIN', vin), reply);
    api.route('/fleet', fleet);
    expect(auditRoutes(api).routes).toStrictEqual([
      { method: 'GET', path: '/api/fleet/summary', access: 'authenticated', permissions: [] },
      { method: 'GET', path: '/api/vehicle/{vin}', access: 'permission', permissions: [{ service: SERVICE, permission: 'READ', resourceType: 'VIN' }] },
    ]);
  });

  test('app.on() with several methods, app.all(), several handlers on one route, method-scoped middleware', () => {
    const { authenticate, requirePermission, publicRoute } = authz;
    const app = new Hono();
    app.on('GET', '/reports/*', authenticate());
    app.on(['GET', 'PUT'], '/both/:vin', requirePermission(SERVICE, 'WRITE', 'VIN', vin), reply);
    app.all('/webhook', publicRoute(), reply);
    app.get('/chain/:vin', requestLog, authenticate(), requirePermission(SERVICE, 'READ', 'VIN', vin), reply);
    app.get('/reports/daily', reply).post('/reports/daily', reply);
    const audit = auditRoutes(app);
    expect(accessOf(audit)).toStrictEqual({
      'GET /both/{vin}': 'permission',
      'PUT /both/{vin}': 'permission',
      'GET /chain/{vin}': 'permission',
      'GET /reports/daily': 'authenticated',
      'POST /reports/daily': 'unguarded',
      ...Object.fromEntries(['DELETE', 'GET', 'OPTIONS', 'PATCH', 'POST', 'PUT'].map((m) => [`${m} /webhook`, 'public'])),
    });
    // A middleware is what Hono's own showRoutes() calls one: it is no route of its own.
    expect(audit.routes.some((r) => r.path.startsWith('/reports/*'))).toBe(false);
  });

  test('middleware that is not ours counts for nothing', () => {
    const app = new Hono();
    const ownAuth: MiddlewareHandler = async (c, next) => (c.req.header('x-admin') === 'yes' ? next() : c.text('no', 401));
    app.use('/admin/*', ownAuth);
    app.get('/admin/export', reply);
    expect(auditRoutes(app).findings).toMatchObject([{ kind: 'unguarded', method: 'GET', path: '/admin/export' }]);
  });

  test('Hono path syntax in OpenAPI form: regex, optional parameters, wildcards', () => {
    const { authenticate, requirePermission } = authz;
    const app = new Hono();
    app.use('/years/:year{[0-9]{4}}/*', authenticate());
    app.get('/years/:year{[0-9]{4}}/report', reply);
    app.get('/docs/:lang?', requirePermission(SERVICE, 'READ', { node: () => 'N-ROOT' }), reply);
    app.get('/files/*', reply);
    expect(accessOf(auditRoutes(app))).toStrictEqual({
      'GET /docs': 'permission',
      'GET /docs/{lang}': 'permission',
      'GET /files/*': 'unguarded',
      'GET /years/{year}/report': 'authenticated',
    });
    // The optional parameter is two routes in Hono: only the one with the parameter is unscoped.
    expect(auditRoutes(app).findings.filter((f) => f.kind === 'unscoped-parameter').map((f) => f.path)).toEqual(['/docs/{lang}']);
  });

  test('a middleware narrower than the route it overlaps guards only some requests: it does not count', () => {
    const app = new Hono();
    app.use('/parts/:id{[0-9]+}', authz.authenticate());
    app.use('/tenants/:tenant/*', authz.authenticate());
    app.use('/files/:name', authz.authenticate());
    app.get('/parts/:code', reply);
    app.get('/parts/:id{[0-9]+}', reply);
    app.get('/tenants/:tenant/users', reply);
    app.get('/files/*', reply);
    expect(accessOf(auditRoutes(app))).toStrictEqual({
      'GET /files/*': 'unguarded',
      'GET /parts/{code}': 'unguarded',
      'GET /parts/{id}': 'authenticated',
      'GET /tenants/{tenant}/users': 'authenticated',
    });
  });
});

describe('auditing changes nothing', () => {
  let app: Hono;
  let handle: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    app = vehicleApp();
    handle = await listen(app.fetch, { count: 0 });
  });
  afterAll(async () => { await handle.close(); });

  const requests: [method: string, path: string, who: 'alice' | 'bob' | undefined][] = [
    ['GET', '/vehicle/WVW1', 'alice'], ['GET', '/vehicle/WVW1', undefined], ['GET', '/vehicle/WVW2', 'alice'],
    ['PUT', '/vehicle/WVW1', 'alice'], ['PUT', '/vehicle/WVW1', 'bob'], ['GET', '/me', 'alice'], ['GET', '/me', undefined],
    ['GET', '/health', undefined], ['GET', '/admin/export', undefined], ['GET', '/fleet/summary', undefined],
    ['GET', '/fleet/summary', 'alice'], ['GET', '/fleet/vehicles/WVW1', 'alice'], ['GET', '/fleet/vehicles/WVW2', 'alice'],
  ];
  async function statuses(): Promise<number[]> {
    const tokens = { alice: iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' }), bob: iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' }) };
    return Promise.all(requests.map(async ([method, path, who]) => {
      const res = await fetch(`${handle.url}${path}`, { method, headers: who ? { authorization: `Bearer ${tokens[who]}` } : {} });
      await res.arrayBuffer();
      return res.status;
    }));
  }

  test('the app answers 200/401/403 the same before and after auditing, over real HTTP', async () => {
    const before = await statuses();
    expect(before).toEqual([200, 401, 403, 403, 200, 200, 401, 200, 200, 401, 200, 200, 403]);
    const table = [...app.routes];
    auditRoutes(app);
    expect(app.routes).toStrictEqual(table);
    expect(await statuses()).toEqual(before);
  });

  test('it does not build the app\'s router (it matches with a router of its own): routes can still be added', async () => {
    const fresh = vehicleApp();
    auditRoutes(fresh);
    fresh.get('/added', authz.publicRoute(), reply);
    expect((await fresh.request('/added')).status).toBe(200);
  });
});
