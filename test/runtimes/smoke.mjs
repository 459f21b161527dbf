/**
 * The runtime smoke suite: the public API (iam-authz and iam-authz-dev, built, imported by name)
 * on a runtime other than Node.js — Bun and Deno in CI (`.ci/runtimes`), and Node itself as the
 * reference. It starts the development IAM, mints tokens, verifies and decides against its JWKS and
 * policy API over real loopback HTTP, answers through the Fetch-API guards and Hono (200/401/403/503),
 * then closes everything: the process must then exit by itself (the caller runs it under a timeout).
 *
 * Prints one line per check and a closing `N passed, N failed`; exits 1 on any failure.
 */
import { createAuthorizer } from 'iam-authz';
import { createFetchGuards } from 'iam-authz/fetch';
import { honoAuthz } from 'iam-authz/hono';
import { startDevIam } from 'iam-authz-dev';
import { Hono } from 'hono';
import { reporter } from './report.mjs';

/** @type {any} */
const host = globalThis;
const runtime = host.Bun ? `bun ${host.Bun.version}` : host.Deno ? `deno ${host.Deno.version.deno}` : `node ${process.version}`;
const { check, done } = reporter();
/** @param {string} name @param {() => Promise<void>} fn */
async function attempt(name, fn) {
  try {
    await fn();
  } catch (/** @type {any} */ error) {
    check(name, false, `${String(error?.name)}: ${String(error?.message)}`);
  }
}

/** @type {any} */
const config = {
  idps: [{ key: 'dev', builtin: true }],
  applications: [{
    id: 'app-1',
    serviceDefinitions: [{ key: 'vehicle-service', permissions: ['READ', 'WRITE'] }],
    roles: [
      { key: 'DRIVER', permissions: { 'vehicle-service': ['READ'] } },
      { key: 'OWNER', permissions: { 'vehicle-service': ['READ', 'WRITE'] } },
    ],
  }],
  actors: [
    { id: 'actor-alice', idp: 'dev', subject: 'alice', account: 'acc-1', application: 'app-1', tenants: { 'tenant-1': [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] } },
    { id: 'actor-bob', idp: 'dev', subject: 'bob', account: 'acc-1', application: 'app-1', tenants: { 'tenant-1': [{ r: ['OWNER'], c: ['VIN=WVW1'] }] } },
  ],
};

console.log(`runtime smoke suite on ${runtime}`);
const iam = await startDevIam({ config });
const authz = createAuthorizer({ baseUrl: iam.baseUrl, audience: 'tenant-1' });
// An IAM that is not there: every guarded request must be a 503, never a 401 or a grant.
const down = createAuthorizer({ baseUrl: 'http://127.0.0.1:9', jwks: { timeoutMs: 2000 } });
const alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
const bob = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' });
const expired = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1', claims: { exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 } });
const forged = `${bob.slice(0, bob.lastIndexOf('.'))}.${'A'.repeat(342)}`;
const query = (/** @type {string} */ permission) => ({ service: 'vehicle-service', permission, resource: { type: 'VIN', value: 'WVW1' } });

await attempt('token endpoint', async () => {
  // The spec's exchange over HTTP: an IdP token from the built-in IdP for an IAM token.
  const response = await fetch(`${iam.baseUrl}/authentication/v1/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${iam.mintIdpToken('alice')}`, 'idp-key': 'dev', accept: 'application/jwt', 'content-type': 'application/json' },
    body: JSON.stringify({ tenantId: 'tenant-1', expiryInSecs: 600, tokenFormat: 't1' }),
  });
  const token = await response.text();
  check('token endpoint: an IdP token is exchanged for an IAM token', response.ok && (response.headers.get('content-type') ?? '').startsWith('application/jwt'), `status ${response.status}`);
  const identity = await authz.authenticate(`Bearer ${token}`);
  check('token endpoint: the issued token verifies, for the IdP subject', identity.claims.sub === 'actor-alice' && identity.claims.exp - (identity.claims.iat ?? 0) === 600);
});
await attempt('console explorer', async () => {
  // The console's explorer runs the library itself against this IAM (its own HTTP client).
  const page = await fetch(`${iam.baseUrl}/console`);
  check('console: the page is served', page.ok, `status ${page.status}`);
  await page.body?.cancel();
});
await attempt('authenticate and authorize through a remote JWKS and policy API', async () => {
  const identity = await authz.authenticate(`Bearer ${alice}`);
  check('authenticate: a valid token yields its claims', identity.claims.sub === 'actor-alice' && identity.claims.app === 'app-1');
  const read = await authz.authorize(identity, query('READ'));
  check('authorize: DRIVER may READ', read.granted && read.reason === 'GRANTED');
  const write = await authz.authorize(identity, query('WRITE'));
  check('authorize: DRIVER may not WRITE', !write.granted && write.reason === 'PERMISSION_NOT_GRANTED');
});
for (const [name, token, code] of [['expired', expired, 'ERR_TOKEN_EXPIRED'], ['forged', forged, 'ERR_TOKEN_INVALID']]) {
  await attempt(`authenticate: ${name}`, async () => {
    const error = await authz.authenticate(`Bearer ${token}`).then(() => undefined, (/** @type {unknown} */ e) => /** @type {any} */ (e));
    check(`authenticate: a ${name} token is a 401 ${code}`, error?.status === 401 && error?.code === code, `${error?.status} ${error?.code}`);
  });
}

const vinOf = (/** @type {string} */ url) => new URL(url).pathname.split('/').pop();
/** @type {[string, string | undefined, number][]} */
const cases = [
  ['bob WRITE', bob, 200],
  ['no token', undefined, 401],
  ['expired token', expired, 401],
  ['forged token', forged, 401],
  ['alice WRITE', alice, 403],
];
await attempt('fetch adapter', async () => {
  const guard = createFetchGuards(authz).requirePermission('vehicle-service', 'WRITE', 'VIN', (request) => vinOf(request.url));
  for (const [name, token, status] of cases) {
    const request = new Request('http://127.0.0.1/vehicle/WVW1', { method: 'PUT', headers: token ? { authorization: `Bearer ${token}` } : {} });
    const result = await guard(request);
    const got = result instanceof Response ? result.status : 200;
    check(`fetch: ${name} → ${status}`, got === status, `got ${got}`);
    if (result instanceof Response && status === 401) check(`fetch: ${name} carries a Bearer challenge`, /^Bearer /.test(result.headers.get('www-authenticate') ?? ''));
  }
  const outage = await createFetchGuards(down).requirePermission('vehicle-service', 'WRITE', 'VIN', (request) => vinOf(request.url))(
    new Request('http://127.0.0.1/vehicle/WVW1', { method: 'PUT', headers: { authorization: `Bearer ${bob}` } }));
  check('fetch: IAM unreachable → 503 with Retry-After', outage instanceof Response && outage.status === 503 && outage.headers.has('retry-after'), outage instanceof Response ? `got ${outage.status}` : 'granted');
});

await attempt('hono adapter', async () => {
  const build = (/** @type {import('iam-authz').Authorizer} */ authorizer) => {
    const app = new Hono();
    app.put('/vehicle/:vin', honoAuthz(authorizer).requirePermission('vehicle-service', 'WRITE', 'VIN', (c) => c.req.param('vin')), (c) => c.json({ ok: true }));
    return app;
  };
  const app = build(authz);
  for (const [name, token, status] of cases) {
    const response = await app.request('/vehicle/WVW1', { method: 'PUT', headers: token ? { authorization: `Bearer ${token}` } : {} });
    check(`hono: ${name} → ${status}`, response.status === status, `got ${response.status}`);
    if (status !== 200) check(`hono: ${name} is problem+json`, (response.headers.get('content-type') ?? '').startsWith('application/problem+json'));
  }
  const outage = await build(down).request('/vehicle/WVW1', { method: 'PUT', headers: { authorization: `Bearer ${bob}` } });
  check('hono: IAM unreachable → 503', outage.status === 503, `got ${outage.status}`);
});

await attempt('close', async () => {
  await authz.close();
  await down.close();
  await iam.close();
  check('close: the authorizers and the development IAM close without an error', true);
});

if (!done()) process.exitCode = 1;
