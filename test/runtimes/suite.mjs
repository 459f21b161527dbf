/**
 * The runtime suite: the public API (iam-authz and iam-authz-dev, built, imported by name) on Node.js,
 * Bun and Deno (`.ci/runtimes`). It starts the development IAM and the fault server in this process
 * (upstreams.mjs: node:http, which all three host), checks the token endpoint, the console page and
 * authenticate/authorize over real loopback HTTP, then runs the scenario table (table.mjs) through
 * app.mjs in-process — the same app and table workerd runs (`.ci/workers`) — and closes
 * everything: the process must then exit by itself (the caller runs it under a time limit).
 *
 * Usage: <runtime> suite.mjs [answers.json] — the table's answers are written there for compare.mjs.
 * Prints one line per check and a closing `N passed, N failed`; exits 1 on any failure.
 */
import { writeFileSync } from 'node:fs';
import { createAuthorizer } from 'iam-authz';
import { createApp } from './app.mjs';
import { reporter } from './report.mjs';
import { runTable } from './table.mjs';
import { startUpstreams } from './upstreams.mjs';

/** @type {any} */
const host = globalThis;
const runtime = host.Bun ? `bun ${host.Bun.version}` : host.Deno ? `deno ${host.Deno.version.deno}` : `node ${process.version}`;
const answersFile = process.argv[2];
const { check, done } = reporter();
/** @param {string} name @param {() => Promise<void>} fn */
async function attempt(name, fn) {
  try {
    await fn();
  } catch (/** @type {any} */ error) {
    check(name, false, `${String(error?.name)}: ${String(error?.message)}`);
  }
}

console.log(`runtime suite on ${runtime}`);
// Bun reads tsconfig.json "paths" (iam-authz → src/*.ts) unless told otherwise: the package must be the built one.
const resolved = import.meta.resolve('iam-authz');
check('iam-authz resolves to the built package (dist/)', /\/dist\/src\/index\.js$/.test(resolved), resolved);
const upstreams = await startUpstreams();
const { iam } = upstreams;
const authz = createAuthorizer({ baseUrl: iam.baseUrl, audience: 'tenant-1' });
const app = createApp({ iam: iam.baseUrl, fault: upstreams.faultBase });

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
await attempt('console', async () => {
  const page = await fetch(`${iam.baseUrl}/console`);
  check('console: the page is served', page.ok, `status ${page.status}`);
  await page.body?.cancel();
});
await attempt('core API', async () => {
  const identity = await authz.authenticate(`Bearer ${iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' })}`);
  check('authenticate: a valid token yields its claims', identity.claims.sub === 'actor-alice' && identity.claims.app === 'app-1');
  const query = (/** @type {string} */ permission) => ({ service: 'vehicle-service', permission, resource: { type: 'VIN', value: 'WVW1' } });
  const read = await authz.authorize(identity, query('READ'));
  check('authorize: DRIVER may READ', read.granted && read.reason === 'GRANTED');
  const write = await authz.authorize(identity, query('WRITE'));
  check('authorize: DRIVER may not WRITE', !write.granted && write.reason === 'PERMISSION_NOT_GRANTED');
});
/** @type {Record<string, unknown>} */
let answers = {};
await attempt('the scenario table ran to its end', async () => {
  answers = await runTable({ dispatch: (url, init) => app.fetch(new Request(url, init)), upstreams, check });
});
if (answersFile) writeFileSync(answersFile, `${JSON.stringify({ runtime, answers }, null, 1)}\n`);

await attempt('close', async () => {
  await app.close();
  await authz.close();
  await upstreams.close();
  check('close: the authorizers, the development IAM and the fault server close without an error', true);
});

if (!done()) process.exitCode = 1;
