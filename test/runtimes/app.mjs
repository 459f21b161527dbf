/**
 * The application of the runtime scenario table: routes guarded with iam-authz through the
 * package's ordinary entry points (imported by name), written both ways people write one:
 * everything made at once (`global`: at module scope in a Worker) and everything made in the
 * first request and kept (`lazy`). Routes: /<style>/<adapter>/<profile>/<READ|WRITE|AUTH>/<vin>,
 * where an adapter is `fetch` (iam-authz/fetch) or `hono` (iam-authz/hono) and a profile is an
 * upstream setup (the IAM, an IAM that is not there, or one JWKS or policy URL of the fault
 * server). The same module runs in workerd (workers/worker.mjs, bundled by wrangler) and in-process
 * on Node, Bun and Deno (suite.mjs), so every runtime answers the same requests with the same code.
 */
import { createAuthorizer } from 'iam-authz';
import { createFetchGuards } from 'iam-authz/fetch';
import { honoAuthz } from 'iam-authz/hono';
import { Hono } from 'hono';

/**
 * @param {{ iam: string, fault: string }} bases the IAM's and the fault server's base URLs
 * @returns {{ fetch(request: Request, env?: unknown, ctx?: any): Promise<Response>, close(): Promise<void> }}
 */
export function createApp({ iam, fault }) {
  const jwks = { minRefreshIntervalMs: 50, timeoutMs: 1000, maxBytes: 65536 };
  const policy = { ttlMs: 300, maxStaleMs: 600_000, minRefreshIntervalMs: 50, timeoutMs: 1000, maxBytes: 65536 };
  const common = { baseUrl: iam, audience: 'tenant-1', jwks, policy };
  // A hanging upstream is given 300 ms (its only effect: the table waits less for each 503).
  const hangingJwks = { ...common, jwks: { ...jwks, timeoutMs: 300 } };
  const hangingPolicy = { ...common, policy: { ...policy, timeoutMs: 300 } };
  /** @type {Record<string, any>} */
  const profiles = {
    iam: common,
    down: { ...common, baseUrl: 'http://127.0.0.1:9' },
    'jwks-hang': { ...hangingJwks, jwksUri: `${fault}/hang` },
    'jwks-redirect': { ...common, jwksUri: `${fault}/redirect-jwks` },
    'jwks-oversized': { ...common, jwksUri: `${fault}/oversized` },
    'jwks-oversized-chunked': { ...common, jwksUri: `${fault}/oversized-chunked` },
    'policy-hang': { ...hangingPolicy, policyUrl: `${fault}/hang` },
    'policy-redirect': { ...common, policyUrl: `${fault}/redirect-policy` },
    'policy-oversized': { ...common, policyUrl: `${fault}/oversized` },
    'policy-oversized-chunked': { ...common, policyUrl: `${fault}/oversized-chunked` },
    // PS256: workerd's node:crypto ignores PSS padding, so there these go through WebCrypto.
    pss: { ...common, algorithms: ['PS256'], jwksUri: `${fault}/pss-jwks` },
  };
  /** @type {import('iam-authz').Authorizer[]} */
  const authorizers = [];

  /** Both adapters over one authorizer per profile. @param {string} style */
  function build(style) {
    const app = new Hono();
    /** @type {Map<string, (request: Request) => Promise<any>>} */
    const fetchRoutes = new Map();
    for (const [name, options] of Object.entries(profiles)) {
      const authorizer = createAuthorizer(options);
      authorizers.push(authorizer);
      const hono = honoAuthz(authorizer);
      const guards = createFetchGuards(authorizer);
      for (const permission of ['READ', 'WRITE', 'AUTH']) {
        // AUTH: the token alone (authenticate()), no permission.
        const honoGuard = permission === 'AUTH' ? hono.authenticate() : hono.requirePermission('vehicle-service', permission, 'VIN', (c) => c.req.param('vin'));
        app.get(`/${style}/hono/${name}/${permission}/:vin`, honoGuard, (c) => c.json({ ok: true, sub: /** @type {any} */ (c).get('iam').claims.sub, permission }));
        fetchRoutes.set(`${name}/${permission}`, permission === 'AUTH' ? guards.authenticate()
          : guards.requirePermission('vehicle-service', permission, 'VIN', (request) => new URL(request.url).pathname.split('/').pop() ?? ''));
      }
    }
    return async (/** @type {Request} */ request, /** @type {unknown} */ env, /** @type {any} */ ctx) => {
      const [, , adapter, profile, permission] = new URL(request.url).pathname.split('/');
      if (adapter === 'hono') return app.fetch(request, env, ctx);
      const guard = fetchRoutes.get(`${profile}/${permission}`);
      if (!guard) return new Response('no such route', { status: 404 });
      const result = await guard(request);
      // Not Response.json: Bun's adds `;charset=utf-8` to the content type (the app's answer, not the library's).
      return result instanceof Response ? result : new Response(JSON.stringify({ ok: true, sub: result.claims.sub, permission }), { headers: { 'content-type': 'application/json' } });
    };
  }

  // Made now (at module scope when workerd loads a Worker, where it allows no timer, random value or I/O).
  const atOnce = build('global');
  /** @type {ReturnType<typeof build> | undefined} */
  let made;
  return {
    fetch(request, env, ctx) {
      const style = new URL(request.url).pathname.split('/')[1];
      if (style === 'global') return atOnce(request, env, ctx);
      if (style === 'lazy') return (made ??= build('lazy'))(request, env, ctx);
      return Promise.resolve(new Response('no such route', { status: 404 }));
    },
    async close() {
      await Promise.all(authorizers.map((authorizer) => authorizer.close()));
    },
  };
}
