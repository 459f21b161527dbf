// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- as smoke.mjs: bundled as is by wrangler, not compiled
// @ts-nocheck -- bundled by wrangler for workerd; run.mjs drives it.
/* global IAM_BASE_URL, FAULT_BASE_URL, URL, Response */
/**
 * A Worker guarding routes with iam-authz through the package's ordinary entry points, written both
 * ways people write one: everything made at module scope (`global`), and everything made in the
 * first request and kept (`lazy`). Routes: /<style>/<adapter>/<profile>/<READ|WRITE>/<vin>, where
 * an adapter is `fetch` (iam-authz/fetch) or `hono` (iam-authz/hono) and a profile is an upstream
 * setup (the real IAM, or one JWKS or policy URL of the fault server). IAM_BASE_URL and
 * FAULT_BASE_URL are set by wrangler's --define at bundle time.
 */
import { createAuthorizer } from 'iam-authz';
import { createFetchGuards } from 'iam-authz/fetch';
import { honoAuthz } from 'iam-authz/hono';
import { Hono } from 'hono';

const iam = IAM_BASE_URL;
const fault = FAULT_BASE_URL;
const common = { baseUrl: iam, audience: 'tenant-1', jwks: { minRefreshIntervalMs: 50, timeoutMs: 1000, maxBytes: 65536 }, policy: { ttlMs: 300, maxStaleMs: 600_000, minRefreshIntervalMs: 50, timeoutMs: 1000, maxBytes: 65536 } };
const profiles = {
  iam: common,
  down: { ...common, baseUrl: 'http://127.0.0.1:9' },
  'jwks-hang': { ...common, jwksUri: `${fault}/hang` },
  'jwks-redirect': { ...common, jwksUri: `${fault}/redirect-jwks` },
  'jwks-huge': { ...common, jwksUri: `${fault}/huge` },
  'policy-hang': { ...common, policyUrl: `${fault}/hang` },
  'policy-redirect': { ...common, policyUrl: `${fault}/redirect-policy` },
  'policy-huge': { ...common, policyUrl: `${fault}/huge` },
  // PS256: workerd's node:crypto ignores PSS padding, so these go through WebCrypto.
  pss: { ...common, algorithms: ['PS256'], jwksUri: `${fault}/pss-jwks` },
};

/** Both adapters over one authorizer per profile. */
function build(style) {
  const app = new Hono();
  const fetchRoutes = new Map();
  for (const [name, options] of Object.entries(profiles)) {
    const authorizer = createAuthorizer(options);
    const hono = honoAuthz(authorizer);
    const guards = createFetchGuards(authorizer);
    for (const permission of ['READ', 'WRITE', 'AUTH']) {
      // AUTH: the token alone (authenticate()), no permission.
      const honoGuard = permission === 'AUTH' ? hono.authenticate() : hono.requirePermission('vehicle-service', permission, 'VIN', (c) => c.req.param('vin'));
      app.get(`/${style}/hono/${name}/${permission}/:vin`, honoGuard, (c) => c.json({ ok: true, sub: c.get('iam').claims.sub, permission }));
      fetchRoutes.set(`${name}/${permission}`, permission === 'AUTH' ? guards.authenticate()
        : guards.requirePermission('vehicle-service', permission, 'VIN', (request) => new URL(request.url).pathname.split('/').pop()));
    }
  }
  return async (request, env, ctx) => {
    const [, , adapter, profile, permission] = new URL(request.url).pathname.split('/');
    if (adapter === 'hono') return app.fetch(request, env, ctx);
    const guard = fetchRoutes.get(`${profile}/${permission}`);
    if (!guard) return new Response('no such route', { status: 404 });
    const result = await guard(request);
    return result instanceof Response ? result : Response.json({ ok: true, sub: result.claims.sub, permission });
  };
}

// Module scope: made when workerd loads the Worker, where it allows no timer, random value or I/O.
const atGlobalScope = build('global');
// In the first request, kept for the later ones.
let made;

export default {
  fetch(request, env, ctx) {
    const style = new URL(request.url).pathname.split('/')[1];
    if (style === 'global') return atGlobalScope(request, env, ctx);
    if (style === 'lazy') return (made ??= build('lazy'))(request, env, ctx);
    return new Response('no such route', { status: 404 });
  },
};
