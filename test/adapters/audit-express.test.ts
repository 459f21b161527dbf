/**
 * `auditRoutes(app)` of `iam-authz/express`, on Express 5 and Express 4: the one application every
 * framework is audited on (audit-expected.ts), then the edge cases of Express's route table that a
 * naive reader gets wrong — group guards before and after routes, path-scoped middleware, mounted
 * routers nested several levels, `app.route()`, `app.all`, a route registered twice, wildcard,
 * optional and pattern paths, case, trailing slashes — and, over real HTTP with real tokens, that
 * the application answers exactly as before once audited.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import express4 from 'express4';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { auditRoutes, expressAuthz } from '../../adapters/express/index.js';
import { createAuthorizer, type Authorizer } from '../../src/index.js';
import { useIam } from '../helpers/index.js';
import { EXPECTED_AUDIT, SERVICE } from './audit-expected.js';

const offline = createAuthorizer({ baseUrl: 'https://iam.example.test', localJwks: { keys: [{ kty: 'RSA', kid: 'k', n: 'AQAB', e: 'AQAB' }] } });
const { authenticate, requirePermission, requireAnyPermission, publicRoute } = expressAuthz(offline);
const vin = (req: express.Request) => req.params.vin as string;
const reply = (_req: express.Request, res: express.Response) => { res.json({ ok: true }); };
/** A user's own middleware: Express shows it on the route, but it guards nothing the audit can know. */
function checkApiKey(_req: express.Request, _res: express.Response, next: express.NextFunction): void { next(); }

/** The application of audit-expected.ts, in Express's idiom, with some middleware that is not ours. */
function expectedApp(make: typeof express, authz = expressAuthz(offline)) {
  const app = make();
  app.use(make.json());
  app.use(make.static('/nonexistent-static-root'));
  app.get('/vehicle/:vin', authz.requirePermission(SERVICE, 'READ', 'VIN', vin), reply);
  app.put('/vehicle/:vin', authz.requirePermission(SERVICE, 'WRITE', 'VIN', vin), reply);
  app.get('/depots/:depotId', authz.requirePermission(SERVICE, 'READ', { node: () => 'N-ROOT' }), reply);
  app.get('/me', authz.authenticate(), reply);
  app.get('/health', authz.publicRoute(), reply);
  app.get('/admin/export', checkApiKey, reply);
  const fleet = make.Router();
  fleet.use(authz.authenticate());
  fleet.get('/vehicles/:vin', authz.requirePermission(SERVICE, 'READ', 'VIN', vin), reply);
  fleet.get('/summary', reply);
  app.use('/fleet', fleet);
  return app;
}

/** `{ 'GET /path': access }` of an audit, for short assertions. */
function accessOf(app: Parameters<typeof auditRoutes>[0]): Record<string, string> {
  return Object.fromEntries(auditRoutes(app).routes.map((r) => [`${r.method} ${r.path}`, r.access]));
}

const VERSIONS = [{ name: 'Express 5', make: express }, { name: 'Express 4', make: express4 }];

describe.each(VERSIONS)('$name', ({ make }) => {
  test('the expected application is audited exactly', () => {
    const result = auditRoutes(expectedApp(make));
    expect(result).toStrictEqual(EXPECTED_AUDIT);
    expect(JSON.parse(JSON.stringify(result))).toStrictEqual(result);
  });

  test('throwOn names only the routes of the kinds asked for', () => {
    const app = expectedApp(make);
    const unguarded = (() => { try { auditRoutes(app, { throwOn: ['unguarded'] }); } catch (error) { return error as Error; } })();
    expect(unguarded).toBeInstanceOf(Error);
    expect(unguarded?.message).toContain('GET /admin/export');
    expect(unguarded?.message).not.toMatch(/\/depots|\/vehicle|\/fleet|\/me|\/health/);
    expect(() => auditRoutes(app, { throwOn: ['unscoped-parameter'] })).toThrow(/GET \/depots\/\{depotId\}$/);
    expect(() => auditRoutes(app, { throwOn: ['unscoped-parameter'] })).not.toThrow(/admin/);
    expect(() => auditRoutes(app, { throwOn: [] })).not.toThrow();
  });

  test('a wrong argument or option is a TypeError saying what to pass', () => {
    for (const wrong of [undefined, null, {}, 'app', () => undefined, { use() {}, listen() {} }]) {
      expect(() => auditRoutes(wrong as never)).toThrow(new TypeError('auditRoutes: pass an Express application (express()) or router (express.Router())'));
    }
    expect(() => auditRoutes(make(), { throwOn: ['holes'] } as never)).toThrow(TypeError);
    expect(() => auditRoutes(make(), { throw: ['unguarded'] } as never)).toThrow(/unknown option "throw"/);
  });

  test('an application or router without routes audits empty; a router audits alone, relative to itself', () => {
    expect(auditRoutes(make())).toStrictEqual({ routes: [], findings: [] });
    const router = make.Router();
    router.get('/vehicles/:vin', requirePermission(SERVICE, 'READ', 'VIN', vin), reply);
    expect(accessOf(router)).toStrictEqual({ 'GET /vehicles/{vin}': 'permission' });
  });

  test('a group guard counts for the routes registered after it, not before: app.use and router.use', () => {
    const app = make();
    app.get('/early', reply);
    app.use(authenticate());
    app.get('/late', reply);
    const fleet = make.Router();
    fleet.get('/before', reply);
    fleet.use(requirePermission(SERVICE, 'READ', { node: () => 'N-ROOT' }));
    fleet.get('/after', reply);
    app.use('/fleet', fleet);
    expect(accessOf(app)).toStrictEqual({
      'GET /early': 'unguarded',
      'GET /fleet/after': 'permission',
      // The app-level authenticate() runs first; the router's own guard is after this route.
      'GET /fleet/before': 'authenticated',
      'GET /late': 'authenticated',
    });
  });

  test('a router\'s group guard also runs for a later route under its mount path, outside the router', () => {
    const app = make();
    const fleet = make.Router();
    fleet.use(authenticate());
    fleet.get('/summary', reply);
    app.use('/fleet', fleet);
    app.get('/fleet/late', reply);
    app.get('/fleetwood', reply);
    expect(accessOf(app)).toStrictEqual({ 'GET /fleet/late': 'authenticated', 'GET /fleet/summary': 'authenticated', 'GET /fleetwood': 'unguarded' });
  });

  test('path-scoped middleware counts for the routes under its path only, parameters and case included', () => {
    const app = make();
    app.use('/fleet', authenticate());
    app.use('/depots/:depotId', requirePermission(SERVICE, 'READ', { node: (req) => req.params.depotId as string }));
    app.use('/Tenants', authenticate());
    app.get('/fleet', reply);
    app.get('/fleet/vehicles/:vin', reply);
    app.get('/fleetwood', reply);
    app.get('/other/fleet', reply);
    app.get('/depots/:id/vehicles', reply);
    app.get('/depots/D1/vehicles', reply);
    app.get('/depots', reply);
    app.get('/tenants/:id', reply);
    expect(accessOf(app)).toStrictEqual({
      'GET /depots': 'unguarded',
      'GET /depots/D1/vehicles': 'permission',
      'GET /depots/{id}/vehicles': 'permission',
      'GET /fleet': 'authenticated',
      'GET /fleet/vehicles/{vin}': 'authenticated',
      'GET /fleetwood': 'unguarded',
      'GET /other/fleet': 'unguarded',
      // Express matches paths case-insensitively unless told otherwise.
      'GET /tenants/{id}': 'authenticated',
    });
    const sensitive = make();
    sensitive.set('case sensitive routing', true);
    sensitive.use('/Tenants', authenticate());
    sensitive.get('/tenants/:id', reply);
    sensitive.get('/Tenants/:id', reply);
    expect(accessOf(sensitive)).toStrictEqual({ 'GET /Tenants/{id}': 'authenticated', 'GET /tenants/{id}': 'unguarded' });
  });

  test('routers nested several levels carry every mount prefix and every group guard above them', () => {
    const app = make();
    const api = make.Router();
    const v1 = make.Router();
    const depots = make.Router({ mergeParams: true });
    const cars = make.Router({ mergeParams: true });
    cars.get('/:vin', requirePermission(SERVICE, 'READ', 'VIN', vin), reply);
    cars.get('/', reply);
    depots.use('/:depotId/cars', cars);
    depots.get('/:depotId', reply);
    v1.use(authenticate());
    v1.use('/depots/', depots);
    api.use('/v1', v1);
    api.get('/status', publicRoute(), reply);
    app.use('/api/', api);
    expect(accessOf(app)).toStrictEqual({
      'GET /api/status': 'public',
      'GET /api/v1/depots/{depotId}': 'authenticated',
      'GET /api/v1/depots/{depotId}/cars': 'authenticated',
      'GET /api/v1/depots/{depotId}/cars/{vin}': 'permission',
    });
  });

  test('app.route() lists each method with its own handlers; several handlers on one route all count', () => {
    const app = make();
    app.route('/vehicle/:vin')
      .get(checkApiKey, requirePermission(SERVICE, 'READ', 'VIN', vin), reply)
      .put(reply)
      .delete(authenticate(), requireAnyPermission(SERVICE, ['WRITE', 'ADMIN'], 'VIN', vin), reply);
    app.options('/vehicle/:vin', publicRoute(), reply);
    const result = auditRoutes(app);
    expect(result.routes).toStrictEqual([
      { method: 'DELETE', path: '/vehicle/{vin}', access: 'permission', permissions: [{ service: SERVICE, permission: 'WRITE', resourceType: 'VIN' }, { service: SERVICE, permission: 'ADMIN', resourceType: 'VIN' }] },
      { method: 'GET', path: '/vehicle/{vin}', access: 'permission', permissions: [{ service: SERVICE, permission: 'READ', resourceType: 'VIN' }] },
      // Only an OPTIONS route the application registered itself is listed, never HEAD or OPTIONS Express adds.
      { method: 'OPTIONS', path: '/vehicle/{vin}', access: 'public', permissions: [] },
      { method: 'PUT', path: '/vehicle/{vin}', access: 'unguarded', permissions: [] },
    ]);
  });

  test('app.all is listed under DELETE, GET, PATCH, POST and PUT; a guard in it counts for later routes of its path', () => {
    const app = make();
    app.all('/any', authenticate(), reply);
    app.all('/vehicle/:vin', requirePermission(SERVICE, 'READ', 'VIN', vin));
    app.get('/vehicle/:vin', reply);
    app.post('/vehicle/:vin', reply);
    expect(accessOf(app)).toStrictEqual({
      'DELETE /any': 'authenticated', 'GET /any': 'authenticated', 'PATCH /any': 'authenticated', 'POST /any': 'authenticated', 'PUT /any': 'authenticated',
      'DELETE /vehicle/{vin}': 'permission', 'GET /vehicle/{vin}': 'permission', 'PATCH /vehicle/{vin}': 'permission', 'POST /vehicle/{vin}': 'permission', 'PUT /vehicle/{vin}': 'permission',
    });
  });

  test('a route registered twice: the first registration answers, so a guard only on the second does not count', () => {
    const app = make();
    app.get('/reports', reply);
    app.get('/reports', authenticate(), reply);
    app.get('/me', authenticate());
    app.get('/me', reply);
    app.get('/all-first', reply);
    app.all('/all-first', authenticate(), reply);
    expect(accessOf(app)).toMatchObject({ 'GET /reports': 'unguarded', 'GET /me': 'authenticated', 'GET /all-first': 'unguarded', 'POST /all-first': 'authenticated' });
  });

  test('trailing slashes and regular-expression paths', () => {
    const app = make();
    app.use('/fleet/', authenticate());
    app.get('/fleet/summary/', reply);
    app.get('/', reply);
    app.get(/^\/legacy\/(\d+)$/, authenticate(), reply);
    const v2 = make.Router();
    v2.get('/status', reply);
    app.use(/^\/v2/, v2);
    app.get(['/a', '/b/:id'], authenticate(), reply);
    expect(accessOf(app)).toStrictEqual({
      'GET /': 'unguarded',
      'GET /a': 'authenticated',
      'GET /b/{id}': 'authenticated',
      'GET /fleet/summary': 'authenticated',
      // A regular expression has no template form: it is shown as written.
      'GET /^\\/legacy\\/(\\d+)$/': 'authenticated',
      'GET /^\\/v2//status': 'unguarded',
    });
  });

  test('a router mounted inside itself is read once', () => {
    const router = make.Router();
    router.get('/x', authenticate(), reply);
    router.use('/again', router);
    const app = make();
    app.use('/r', router);
    expect(accessOf(app)).toStrictEqual({ 'GET /r/x': 'authenticated' });
  });

  test('a mounted sub-application cannot be read from its parent: auditRoutes says so instead of missing its routes', () => {
    const app = make();
    const sub = make();
    sub.get('/secret', reply);
    app.use('/sub', sub);
    expect(() => auditRoutes(app)).toThrow('auditRoutes: an Express application is mounted at /sub (app.use(path, subApp)); its routes cannot be read from the parent application: mount an express.Router() there instead');
  });
});

describe('Express 5 paths', () => {
  test('/*splat is {splat}; {/:opt} is listed with and without the optional part; escapes and quoted names', () => {
    const app = express();
    app.get('/files/*splat', authenticate(), reply);
    app.get('/docs{/:page}', reply);
    app.get('/v{:major}.json', reply);
    app.get('/raw/\\:literal', reply);
    app.get('/q/:"quoted name"', reply);
    app.get('/{*rest}', publicRoute(), reply);
    expect(Object.keys(accessOf(app))).toStrictEqual([
      'GET /', 'GET /docs', 'GET /docs/{page}', 'GET /files/{splat}', 'GET /q/{quoted name}', 'GET /raw/:literal', 'GET /v.json', 'GET /v{major}.json', 'GET /{rest}',
    ]);
  });

  test('a wildcard group guard covers everything below it; a plain parameter does not cover a wildcard', () => {
    const app = express();
    app.use('/files/*path', authenticate());
    app.use('/docs/:page', authenticate());
    app.get('/files/a/b', reply);
    app.get('/docs/*rest', reply);
    expect(accessOf(app)).toStrictEqual({ 'GET /docs/{rest}': 'unguarded', 'GET /files/a/b': 'authenticated' });
  });

  test('without the mount paths router 2.3 keeps (router 2.2), auditRoutes refuses rather than guesses', () => {
    const app = express();
    const fleet = express.Router();
    fleet.get('/summary', reply);
    app.use('/fleet', fleet);
    const layer = (app.router as unknown as { stack: { rawPath?: unknown }[] }).stack.at(-1)!;
    delete layer.rawPath;
    expect(() => auditRoutes(app)).toThrow(/router 2\.3 or later/);
  });
});

describe('Express 4 paths', () => {
  test('* is {0}, :id(\\d+) is {id}; an optional :x? is listed with and without it; a pattern guard covers only its pattern', () => {
    const app = express4();
    app.use('/items/:id(\\d+)', authenticate());
    app.get('/items/:id(\\d+)/parts', reply);
    app.get('/items/:id/notes', reply);
    app.get('/files/*', authenticate(), reply);
    app.get('/users/:id?', reply);
    app.get('/report.:format', reply);
    expect(accessOf(app)).toStrictEqual({
      'GET /files/{0}': 'authenticated',
      'GET /items/{id}/notes': 'unguarded',
      'GET /items/{id}/parts': 'authenticated',
      'GET /report.{format}': 'unguarded',
      'GET /users': 'unguarded',
      'GET /users/{id}': 'unguarded',
    });
  });

  test('a mounted router\'s path is read back from its compiled regexp, and checked by compiling it again', () => {
    const app = express4();
    const router = express4.Router();
    router.get('/x', reply);
    app.use(['/one/:a', '/two/:b(\\d+)/three.json', '/four/*'], authenticate(), router);
    expect(accessOf(app)).toStrictEqual({ 'GET /four/{0}/x': 'authenticated', 'GET /one/{a}/x': 'authenticated', 'GET /two/{b}/three.json/x': 'authenticated' });
    // Auditing an app that never registered a route creates no router in it.
    const empty = express4() as unknown as { _router?: unknown };
    auditRoutes(empty as never);
    expect(empty._router).toBeUndefined();
  });
});

describe.each(VERSIONS)('$name over real HTTP', ({ make }) => {
  const iam = useIam();
  let authorizer: Authorizer;
  beforeAll(async () => {
    authorizer = iam.authorizer();
  });
  afterAll(async () => {
    await authorizer.close();
  });

  test('the application answers 200/401/403 exactly as before once audited', async () => {
    const app = expectedApp(make, expressAuthz(authorizer));
    app.get('/fleet/late', reply);
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const alice = iam.token({ sub: 'actor-alice', ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] });
      const paths = ['/vehicle/WVW1', '/vehicle/WVW2', '/depots/D1', '/me', '/health', '/admin/export', '/fleet/summary', '/fleet/vehicles/WVW1', '/fleet/vehicles/WVW2', '/fleet/late'];
      const statuses = async () => {
        const out: Record<string, [number, number]> = {};
        for (const path of paths) {
          const anonymous = await fetch(`${url}${path}`);
          const withToken = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${alice}` } });
          out[path] = [anonymous.status, withToken.status];
        }
        return out;
      };
      const before = await statuses();
      expect(before).toStrictEqual({
        '/vehicle/WVW1': [401, 200], '/vehicle/WVW2': [401, 403], '/depots/D1': [401, 403], '/me': [401, 200], '/health': [200, 200],
        '/admin/export': [200, 200], '/fleet/summary': [401, 200], '/fleet/vehicles/WVW1': [401, 200], '/fleet/vehicles/WVW2': [401, 403],
        // The router's group guard runs for this later route too, as the audit says.
        '/fleet/late': [401, 200],
      });
      expect(auditRoutes(app).routes).toContainEqual({ method: 'GET', path: '/fleet/late', access: 'authenticated', permissions: [] });
      auditRoutes(app);
      expect(await statuses()).toStrictEqual(before);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
