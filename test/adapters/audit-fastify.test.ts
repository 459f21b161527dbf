/**
 * `auditRoutes(fastify)` from `iam-authz/fastify`: the shared application (audit-expected.ts) in
 * Fastify's idiom gives exactly EXPECTED_AUDIT; then the route table cases a naive reader gets
 * wrong — hooks inherited through encapsulation (and only through it), hooks added after the routes,
 * method arrays, the HEAD routes Fastify adds, Fastify's path syntax, prefixes with and without a
 * trailing slash, routes the plugin never saw — each checked against what Fastify really does with
 * a request; and the app answers the same over a real loopback server before and after auditing.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions, type RouteHandlerMethod } from 'fastify';
import fp from 'fastify-plugin';
import express from 'express';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer, type Authorizer } from '../../src/index.js';
import type { RouteAudit } from '../../src/adapter/index.js';
import { auditRoutes, fastifyAuthz, iamAuthz } from '../../adapters/fastify/index.js';
import { useIam } from '../helpers/index.js';
import { EXPECTED_AUDIT, SERVICE } from './audit-expected.js';
import { thrownBy } from '../helpers/errors.js';

const reply: RouteHandlerMethod = async (req) => ({ ok: true, sub: req.iam?.claims.sub ?? null });
const param = (name: string) => (req: { params: unknown }) => (req.params as Record<string, string>)[name];

/** An authorizer that never reaches the network: requests without a token are all these tests send it. */
function offline(): Authorizer {
  return createAuthorizer({ baseUrl: 'https://iam.example.test', localJwks: { keys: [{ kty: 'RSA', kid: 'k', n: 'AQAB', e: 'AQAB' }] } });
}

/** The shared application: the plugin first, then the routes, the fleet group in a prefixed plugin. */
async function expectedApp(authorizer: Authorizer): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(iamAuthz, { authorizer });
  const { authenticate, requirePermission, publicRoute } = app.iamAuthz;
  app.get('/vehicle/:vin', { preHandler: requirePermission(SERVICE, 'READ', 'VIN', param('vin')) }, reply);
  app.put('/vehicle/:vin', { preHandler: requirePermission(SERVICE, 'WRITE', 'VIN', param('vin')) }, reply);
  app.get('/depots/:depotId', { preHandler: requirePermission(SERVICE, 'READ', { node: () => 'N-ROOT' }) }, reply);
  app.get('/me', { onRequest: authenticate() }, reply);
  app.get('/health', { onRequest: publicRoute() }, reply);
  app.get('/admin/export', reply);
  app.register(async (fleet) => {
    fleet.addHook('onRequest', authenticate());
    fleet.get('/vehicles/:vin', { preHandler: requirePermission(SERVICE, 'READ', 'VIN', param('vin')) }, reply);
    fleet.get('/summary', reply);
  }, { prefix: '/fleet' });
  await app.ready();
  return app;
}

const open: FastifyInstance[] = [];
afterEach(async () => { await Promise.all(open.splice(0).map((app) => app.close())); });

/** A ready app: the plugin registered (and awaited) first, then `routes`. */
async function appWith(routes: (app: FastifyInstance) => void, options: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(options);
  open.push(app);
  await app.register(iamAuthz, { authorizer: offline() });
  routes(app);
  await app.ready();
  return app;
}

const brief = (audit: RouteAudit) => audit.routes.map((r) => `${r.method} ${r.path} ${r.access}`);

/**
 * The audit agrees with Fastify: each audited route, requested without a token, is refused (401)
 * exactly when the audit says a guard requires one. `{param}` becomes `1`, `{wildcard}` `any`.
 */
async function agreesWithFastify(app: FastifyInstance, audit: RouteAudit): Promise<void> {
  for (const { method, path, access } of audit.routes) {
    const url = path.replace(/\{wildcard\}/g, 'any').replace(/\{[^}]+\}/g, '1');
    const { statusCode } = await app.inject({ method: method as 'GET', url });
    expect(`${method} ${path} ${statusCode}`).toBe(`${method} ${path} ${access === 'authenticated' || access === 'permission' ? 401 : 200}`);
  }
}

describe('the shared application', () => {
  test('is audited exactly; the result is plain JSON; auditing again gives the same', async () => {
    const app = await expectedApp(offline());
    open.push(app);
    const audit = auditRoutes(app);
    expect(audit).toStrictEqual(EXPECTED_AUDIT);
    expect(JSON.parse(JSON.stringify(audit))).toStrictEqual(audit);
    expect(auditRoutes(app)).toStrictEqual(audit);
    await agreesWithFastify(app, audit);
  });

  test('throwOn names the offending routes and no other', async () => {
    const app = await expectedApp(offline());
    open.push(app);
    const thrown = (throwOn: ('unguarded' | 'unscoped-parameter')[]): Error => thrownBy(() => auditRoutes(app, { throwOn }));
    const unguarded = thrown(['unguarded']);
    expect(unguarded.message).toContain('GET /admin/export');
    expect(unguarded.message.match(/(GET|PUT) \//g)).toEqual(['GET /']);
    expect(unguarded).toMatchObject({ code: 'ERR_ROUTE_AUDIT' });
    const unscoped = thrown(['unscoped-parameter']);
    expect(unscoped.message).toContain('GET /depots/{depotId}');
    expect(unscoped.message.match(/(GET|PUT) \//g)).toEqual(['GET /']);
    expect(() => auditRoutes(app, { throwOn: ['everything'] as never })).toThrow(TypeError);
    expect(() => auditRoutes(app, { thrownOn: [] } as never)).toThrow(/auditRoutes: unknown option "thrownOn"/);
  });
});

describe('whose hooks run for a route', () => {
  test('a group guard covers its plugin and the plugins inside it, not its siblings nor its parent; one added after the routes counts', async () => {
    const app = await appWith((root) => {
      const { authenticate } = root.iamAuthz;
      root.get('/root', reply);
      root.register(async (fleet) => {
        fleet.get('/before', reply);
        fleet.register(async (inner) => { inner.get('/deep', reply); }, { prefix: '/inner' });
        // Fastify resolves a context's hooks at ready(): this one guards the routes above it too.
        fleet.addHook('preHandler', authenticate());
      }, { prefix: '/fleet' });
      root.register(async (other) => { other.get('/open', reply); }, { prefix: '/other' });
    });
    const audit = auditRoutes(app);
    expect(brief(audit)).toEqual(['GET /fleet/before authenticated', 'GET /fleet/inner/deep authenticated', 'GET /other/open unguarded', 'GET /root unguarded']);
    await agreesWithFastify(app, audit);
  });

  test('a hook added by a fastify-plugin (not encapsulated) guards the context it is registered in', async () => {
    const app = await appWith((root) => {
      const { authenticate } = root.iamAuthz;
      root.register(async (api) => {
        await api.register(fp(async (shared) => { shared.addHook('onRequest', authenticate()); }));
        api.get('/x', reply);
      }, { prefix: '/api' });
      root.get('/y', reply);
    });
    const audit = auditRoutes(app);
    expect(brief(audit)).toEqual(['GET /api/x authenticated', 'GET /y unguarded']);
    await agreesWithFastify(app, audit);
  });

  test('route-level hooks, a function or an array of either kind, add up with the inherited ones', async () => {
    const app = await appWith((root) => {
      const { authenticate, requirePermission, publicRoute } = root.iamAuthz;
      const mine = async (): Promise<void> => {};
      root.get('/array/:vin', { onRequest: [mine, authenticate()], preHandler: [mine, requirePermission(SERVICE, 'READ', 'VIN', param('vin'))] }, reply);
      root.get('/public', { preHandler: [publicRoute()] }, reply);
      root.register(async (group) => {
        group.addHook('onRequest', authenticate());
        group.get('/both/:vin', { preHandler: requirePermission(SERVICE, 'WRITE', 'VIN', param('vin')) }, reply);
      }, { prefix: '/group' });
    });
    const audit = auditRoutes(app);
    expect(audit.routes).toStrictEqual([
      { method: 'GET', path: '/array/{vin}', access: 'permission', permissions: [{ service: SERVICE, permission: 'READ', resourceType: 'VIN' }] },
      { method: 'GET', path: '/group/both/{vin}', access: 'permission', permissions: [{ service: SERVICE, permission: 'WRITE', resourceType: 'VIN' }] },
      { method: 'GET', path: '/public', access: 'public', permissions: [] },
    ]);
    expect(audit.findings).toEqual([]);
    await agreesWithFastify(app, audit);
  });

  test('a guard in preParsing or preValidation runs before the handler and counts; one that runs after it (onSend, onResponse) does not', async () => {
    const app = await appWith((root) => {
      const { authenticate } = root.iamAuthz;
      root.get('/parsing', { preParsing: authenticate() }, reply);
      root.get('/validation', { preValidation: authenticate() }, reply);
      root.get('/response', { onResponse: authenticate() }, reply);
      root.register(async (late) => { late.addHook('onSend', authenticate() as never); late.get('/send', reply); });
    });
    const audit = auditRoutes(app);
    expect(brief(audit)).toEqual(['GET /parsing authenticated', 'GET /response unguarded', 'GET /send unguarded', 'GET /validation authenticated']);
    expect(audit.findings.map((f) => `${f.kind} ${f.path}`)).toEqual(['unguarded /response', 'unguarded /send']);
    const parsing = await app.inject({ url: '/parsing' });
    expect(parsing.statusCode).toBe(401);
    expect((await app.inject({ url: '/validation' })).statusCode).toBe(401);
  });

  test('hooks that are not ours count for nothing, even when they check a token', async () => {
    const app = await appWith((root) => {
      const { authenticate } = root.iamAuthz;
      const ownCheck = async (req: { headers: Record<string, unknown> }): Promise<void> => {
        if (req.headers.authorization === undefined) throw Object.assign(new Error('no token'), { statusCode: 401 });
      };
      const ours = authenticate();
      // A wrapper around our guard is the user's function: it carries no mark.
      const wrapped = async function (this: unknown, ...args: Parameters<typeof ours>): Promise<void> { await ours.apply(this as never, args); };
      root.get('/own', { onRequest: ownCheck }, reply);
      root.register(async (group) => { group.addHook('onRequest', ownCheck); group.get('/own-group', reply); });
      root.get('/wrapped', { onRequest: wrapped }, reply);
    });
    expect(brief(auditRoutes(app))).toEqual(['GET /own unguarded', 'GET /own-group unguarded', 'GET /wrapped unguarded']);
  });
});

describe('the route table', () => {
  test('a method array is one route per method; the HEAD routes Fastify adds are left out, one declared is not', async () => {
    const app = await appWith((root) => {
      const { authenticate } = root.iamAuthz;
      root.route({ method: ['GET', 'PUT'], url: '/multi', onRequest: authenticate(), handler: reply });
      root.get('/auto', reply);
      root.head('/declared', { onRequest: authenticate() }, reply);
      root.get('/declared', { onRequest: authenticate() }, reply);
      root.register(async (group) => { group.get('/', reply); group.get('/x', reply); }, { prefix: '/group' });
    });
    const audit = auditRoutes(app);
    expect(brief(audit)).toEqual(['GET /auto unguarded', 'GET /declared authenticated', 'HEAD /declared authenticated', 'GET /group unguarded', 'GET /group/x unguarded', 'GET /multi authenticated', 'PUT /multi authenticated']);
    await agreesWithFastify(app, audit);
    // Fastify did add them: they answer.
    expect((await app.inject({ method: 'HEAD', url: '/auto' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'HEAD', url: '/multi' })).statusCode).toBe(401);
  });

  test('Fastify paths in OpenAPI form: wildcards, regular expressions, several parameters in a segment, an escaped colon', async () => {
    const app = await appWith((root) => {
      root.get('/files/*', reply);
      root.get('/orders/:id(^\\d+)', reply);
      root.get('/codes/:code(^(?:[A-Z]{2})$)/items', reply);
      root.get('/near/:lat-:lng', reply);
      root.get('/jobs/:id/name::run', reply);
    });
    const audit = auditRoutes(app);
    expect(audit.routes.map((r) => r.path)).toEqual(['/codes/{code}/items', '/files/{wildcard}', '/jobs/{id}/name:run', '/near/{lat}-{lng}', '/orders/{id}']);
    expect(audit.findings.every((f) => f.kind === 'unguarded')).toBe(true);
  });

  test('prefixes with and without a trailing slash, and every prefixTrailingSlash, give the path without one', async () => {
    const app = await appWith((root) => {
      const { authenticate } = root.iamAuthz;
      root.register(async (a) => { a.addHook('onRequest', authenticate()); a.get('/', reply); a.get('/x', reply); }, { prefix: '/both' });
      root.register(async (b) => { b.get('/', reply); b.get('/y', reply); }, { prefix: '/slashed/' });
      root.register(async (c) => { c.get('/', { prefixTrailingSlash: 'slash' }, reply); }, { prefix: '/only-slash' });
      root.register(async (d) => { d.get('/', { prefixTrailingSlash: 'no-slash' }, reply); }, { prefix: '/no-slash' });
      root.get('/', reply);
    });
    const audit = auditRoutes(app);
    expect(brief(audit)).toEqual(['GET / unguarded', 'GET /both authenticated', 'GET /both/x authenticated', 'GET /no-slash unguarded', 'GET /only-slash unguarded', 'GET /slashed unguarded', 'GET /slashed/y unguarded']);
    // Both forms Fastify routes for "both" are guarded alike.
    expect((await app.inject({ url: '/both/' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/both' })).statusCode).toBe(401);
  });

  test('two routes that are one path in OpenAPI form (a trailing slash, a constraint): the weaker guard is reported', async () => {
    const app = await appWith((root) => {
      const { authenticate } = root.iamAuthz;
      root.get('/report', { onRequest: authenticate() }, reply);
      root.get('/report/', reply);
      root.get('/versioned', { constraints: { version: '2.0.0' }, onRequest: authenticate() }, reply);
      root.get('/versioned', { constraints: { version: '1.0.0' } }, reply);
    });
    expect(brief(auditRoutes(app))).toEqual(['GET /report unguarded', 'GET /versioned unguarded']);
    expect((await app.inject({ url: '/report/' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/versioned', headers: { 'accept-version': '1.0.0' } })).statusCode).toBe(200);
  });

  test('the preflight route @fastify/cors adds (OPTIONS *) is left out; other OPTIONS routes are not', async () => {
    const app = await appWith((root) => {
      const { authenticate } = root.iamAuthz;
      // What @fastify/cors registers (with `schema: { hide: true }`): preflights carry no credentials.
      root.options('*', async (_req, res) => res.send());
      root.options('/me', { onRequest: authenticate() }, reply);
    });
    expect(brief(auditRoutes(app))).toEqual(['OPTIONS /me authenticated']);
  });
});

describe('what auditRoutes refuses', () => {
  test('routes registered before the plugin were never recorded: an error naming them, saying to register the plugin first', async () => {
    const early = Fastify();
    open.push(early);
    early.get('/early/:id', reply);
    await early.register(iamAuthz, { authorizer: offline() });
    early.get('/late', reply);
    await early.ready();
    expect(() => auditRoutes(early)).toThrow(TypeError);
    expect(() => auditRoutes(early)).toThrow(/registered before the iamAuthz plugin[^]*early\/[^]*register the plugin before the routes/);

    // The same mistake without `await`: register() only queues the plugin, the routes come first.
    const queued = Fastify();
    open.push(queued);
    void queued.register(iamAuthz, { authorizer: offline() });
    queued.get('/x', reply);
    await queued.ready();
    expect(() => auditRoutes(queued)).toThrow(/registered before the iamAuthz plugin/);
  });

  test('before ready(): a TypeError saying to await it', async () => {
    const app = Fastify();
    open.push(app);
    await app.register(iamAuthz, { authorizer: offline() });
    app.get('/x', reply);
    expect(() => auditRoutes(app)).toThrow(TypeError);
    expect(() => auditRoutes(app)).toThrow(/after await fastify\.ready\(\)/);
    await app.ready();
    expect(brief(auditRoutes(app))).toEqual(['GET /x unguarded']);
  });

  test('without the plugin (fastifyAuthz hooks alone): a TypeError saying to register it before the routes', async () => {
    const app = Fastify();
    open.push(app);
    const { authenticate } = fastifyAuthz(offline());
    app.get('/x', { onRequest: authenticate() }, reply);
    await app.ready();
    expect(() => auditRoutes(app)).toThrow(TypeError);
    expect(() => auditRoutes(app)).toThrow(/register the iamAuthz plugin[^]*before the routes/);
  });

  test('anything but a Fastify instance: a TypeError saying what to pass', () => {
    for (const wrong of [undefined, null, {}, express(), 'app']) {
      expect(() => auditRoutes(wrong as never)).toThrow(TypeError);
      expect(() => auditRoutes(wrong as never)).toThrow(/auditRoutes: pass a Fastify instance/);
    }
  });
});

describe('over real HTTP', () => {
  const iam = useIam();
  let authorizer: Authorizer;
  beforeAll(async () => {
    authorizer = iam.authorizer();
  });
  
  test('the app answers 200/401/403 as before, after auditing', async () => {
    const app = await expectedApp(authorizer); // the plugin closes the authorizer with the app
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const alice = iam.token({ sub: 'actor-alice', ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] });
      const requests: [string, string, string | undefined][] = [
        ['GET', '/vehicle/WVW1', alice], ['GET', '/vehicle/WVW1', undefined], ['GET', '/vehicle/WVW2', alice],
        ['PUT', '/vehicle/WVW1', alice], ['GET', '/depots/D1', alice], ['GET', '/me', alice], ['GET', '/me', undefined],
        ['GET', '/health', undefined], ['GET', '/admin/export', undefined], ['GET', '/fleet/summary', undefined],
        ['GET', '/fleet/summary', alice], ['GET', '/fleet/vehicles/WVW1', alice], ['GET', '/fleet/vehicles/WVW2', alice],
      ];
      const answers = async () => Promise.all(requests.map(async ([method, path, token]) => {
        const res = await fetch(`${url}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
        return `${method} ${path} ${token ? 'token' : 'none'} ${res.status}`;
      }));
      const before = await answers();
      expect(before).toEqual([
        'GET /vehicle/WVW1 token 200', 'GET /vehicle/WVW1 none 401', 'GET /vehicle/WVW2 token 403',
        'PUT /vehicle/WVW1 token 403', 'GET /depots/D1 token 403', 'GET /me token 200', 'GET /me none 401',
        'GET /health none 200', 'GET /admin/export none 200', 'GET /fleet/summary none 401',
        'GET /fleet/summary token 200', 'GET /fleet/vehicles/WVW1 token 200', 'GET /fleet/vehicles/WVW2 token 403',
      ]);
      expect(auditRoutes(app)).toStrictEqual(EXPECTED_AUDIT);
      expect(await answers()).toEqual(before);
    } finally {
      await app.close();
    }
  });
});
