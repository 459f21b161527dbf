/**
 * How cost grows (issue #14 §6):
 *   1. a guarded request with a cached token (`authenticate` cache hit + warm `authorize`) as the
 *      token's `ars` grows (1, 10, 100, 1,000 access references; the checked one is last);
 *   2. the same as the policy grows (10, 1,000, 10,000 roles; a 10-reference token);
 *   3. a cold policy fetch + compile of a 10,000-role policy (the first request of an application),
 *      and `compilePolicy` alone;
 *   4. time from `createAuthorizer` to the first decision against the development IAM on loopback,
 *      without and with `ready()` first.
 * Cases 1–2 are interleaved micro-benchmarks (bench/lib/measure.ts); 3–4 are repeated cold runs,
 * alternated, reported as median and min–max.
 *
 * Run: `npm run bench:growth`. Not a test: nothing is asserted, the exit code is 0.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createAuthorizer, type Authorizer } from '../../src/authorizer.js';
import { compilePolicy } from '../../src/engine/compile-policy.js';
import type { RolePolicy } from '../../src/types.js';
import { startDevIam } from 'iam-authz-dev';
import { signJwt } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { BASE_URL, ISSUER, createFixture } from '../lib/fixture.js';
import { environmentLine, formatHeader, formatResult, measureInterleaved } from '../lib/measure.js';
import { summarize } from '../lib/stats.mjs';

const SERVICES = ['vehicle-service', 'fleet-service', 'billing-service', 'charging-service'];
const PERMISSIONS = ['READ', 'WRITE', 'DELETE', 'ADMIN', 'EXPORT'];
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 9);

/** `roles` roles, each granting two to five permissions in two of four services. */
function policyOf(roles: number): RolePolicy {
  return {
    applicationId: 'app-1',
    changeId: `bench-${roles}`,
    roles: Array.from({ length: roles }, (_, i) => ({
      key: `ROLE_${i}`,
      servicePolicies: [SERVICES[i % 4]!, SERVICES[(i + 1) % 4]!].map((service, j) => ({
        serviceDefinitionSource: 'APPLICATION',
        serviceDefinitionKey: service,
        permissions: PERMISSIONS.slice(0, 2 + ((i + j) % 4)).map((key) => ({ key })),
      })),
    })),
  };
}

async function servePolicy(policy: RolePolicy): Promise<{ url: string; bytes: number; server: Server }> {
  const body = JSON.stringify(policy);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', etag: `"${policy.changeId}"` }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/policy/v1/roles`, bytes: Buffer.byteLength(body), server };
}

const fx = createFixture();
const nowSec = Math.floor(Date.now() / 1000);

/** A token with `refs` access references; the checked VIN is in the last one (the worst case for a scan). */
function tokenWith(refs: number, lastRole: string): string {
  const ars = [
    ...Array.from({ length: refs - 1 }, (_, i) => ({ r: [`ROLE_${(i * 7) % 10}`], c: [`VIN=OTHER${i}`, `FLEET=F${i}`] })),
    { r: [lastRole], c: ['VIN=WVW1'] },
  ];
  return signJwt(
    { jti: `bench-${refs}`, iss: ISSUER, sub: 'actor-alice', aud: 'tenant-1', tid: 'tenant-1', exp: nowSec + 86_400, iat: nowSec, acc: 'acc-1', app: 'app-1', ars },
    fx.key,
    { cty: 't1' },
  );
}

const LONG = { ttlMs: 3_600_000, maxStaleMs: 3_600_000, minRefreshIntervalMs: 3_600_000, maxBytes: 64 * 1024 * 1024 };
const query = { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } } as const;
const servers: Server[] = [];
const authorizers: Authorizer[] = [];

async function guardedCase(name: string, policyUrl: string, token: string): Promise<{ name: string; fn: () => Promise<unknown> }> {
  // A 1,000-reference token (~48 KB) is over Node's 16 KiB header limit: fetch the policy as the service.
  const authorizer = createAuthorizer({ baseUrl: BASE_URL, localJwks: fx.jwks, policyUrl, policy: LONG, maxTokenBytes: 1024 * 1024, policyToken: () => Promise.resolve(fx.token) });
  authorizers.push(authorizer);
  const authorization = `Bearer ${token}`;
  const decision = await authorizer.authorize(await authorizer.authenticate(authorization), query);
  if (!decision.granted) throw new Error(`${name}: not granted (${decision.reason})`);
  return { name, fn: async () => authorizer.authorize(await authorizer.authenticate(authorization), query) };
}

console.log(environmentLine());

// 1 and 2: a guarded request with a cached token.
const small = await servePolicy(policyOf(10));
const mid = await servePolicy(policyOf(1_000));
const large = await servePolicy(policyOf(10_000));
servers.push(small.server, mid.server, large.server);
const cases = [];
for (const refs of [1, 10, 100, 1_000]) {
  const token = tokenWith(refs, 'ROLE_0');
  cases.push(await guardedCase(`ars ${refs} refs (${token.length} B), 10 roles`, small.url, token));
}
const tenRefs = tokenWith(10, 'ROLE_0');
for (const [roles, served] of [[1_000, mid], [10_000, large]] as const) {
  cases.push(await guardedCase(`ars 10 refs, policy ${roles} roles (${Math.round(served.bytes / 1024)} KiB)`, served.url, tenRefs));
}
console.log('\n1–2. cached authenticate + warm authorize, as the token and the policy grow\n');
console.log(formatHeader(52));
for (const result of await measureInterleaved(cases)) console.log(formatResult(result, 52));

// 3. Cold policy fetch + compile of a 10,000-role policy, and compile alone.
function stats(samples: number[]): string {
  const t = summarize(samples);
  return `${t.median.toFixed(1)} ms median (min ${t.min.toFixed(1)}, max ${t.max.toFixed(1)}, ${t.n} runs)`;
}
const largePolicy = policyOf(10_000);
const coldFetch: number[] = [];
const compileOnly: number[] = [];
const identity = await authorizers[0]!.authenticate(`Bearer ${tenRefs}`);
for (let i = 0; i < COLD_RUNS; i++) {
  const authorizer = createAuthorizer({ baseUrl: BASE_URL, localJwks: fx.jwks, policyUrl: large.url, policy: LONG });
  const start = performance.now();
  const decision = await authorizer.authorize(identity, query);
  coldFetch.push(performance.now() - start);
  if (!decision.granted) throw new Error('cold fetch: not granted');
  await authorizer.close();
  const t = performance.now();
  compilePolicy(largePolicy);
  compileOnly.push(performance.now() - t);
}
console.log(`\n3. policy of 10,000 roles (${(large.bytes / 1024 / 1024).toFixed(1)} MiB of JSON)`);
console.log(`   first authorize (fetch + parse + validate + compile): ${stats(coldFetch)}`);
console.log(`   compilePolicy alone:                                 ${stats(compileOnly)}`);

// 4. From createAuthorizer to the first decision against the development IAM.
const iam = await startDevIam({
  config: {
    idps: [{ key: 'dev', builtin: true }],
    applications: [{ id: 'app-1', serviceDefinitions: [{ key: 'vehicle-service', permissions: ['READ', 'WRITE'] }], roles: [{ key: 'DRIVER', permissions: { 'vehicle-service': ['READ'] } }] }],
    actors: [{ id: 'actor-alice', idp: 'dev', subject: 'alice', account: 'acc-1', application: 'app-1', tenants: { 'tenant-1': [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] } }],
  },
  console: false,
});
const iamToken = `Bearer ${iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' })}`;
const serviceToken = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
type Mode = 'plain' | 'ready' | 'warm';
const total: Record<Mode, number[]> = { plain: [], ready: [], warm: [] };
const readyOnly: Record<Mode, number[]> = { plain: [], ready: [], warm: [] };
const firstRequest: Record<Mode, number[]> = { plain: [], ready: [], warm: [] };
for (let i = 0; i < COLD_RUNS; i++) {
  for (const mode of ['plain', 'ready', 'warm'] as const) {
    const start = performance.now();
    const authorizer = mode === 'warm'
      ? createAuthorizer({ baseUrl: iam.baseUrl, policyToken: () => Promise.resolve(serviceToken) })
      : createAuthorizer({ baseUrl: iam.baseUrl });
    if (mode === 'ready') await authorizer.ready();
    if (mode === 'warm') await authorizer.ready({ applications: ['app-1'] });
    readyOnly[mode].push(performance.now() - start);
    const t = performance.now();
    const decision = await authorizer.authorize(await authorizer.authenticate(iamToken), query);
    if (!decision.granted) throw new Error(`dev IAM: not granted (${decision.reason})`);
    total[mode].push(performance.now() - start);
    firstRequest[mode].push(performance.now() - t);
    await authorizer.close();
  }
}
console.log('\n4. createAuthorizer → first decision, development IAM on loopback');
console.log(`   without ready():                          first request ${stats(firstRequest.plain)}`);
console.log(`   ready() (JWKS):                           ready ${stats(readyOnly.ready)}; then first request ${stats(firstRequest.ready)}`);
console.log(`   ready({ applications }) (JWKS + policy):  ready ${stats(readyOnly.warm)}; then first request ${stats(firstRequest.warm)}`);
console.log(`   in total: ${stats(total.plain)} / ${stats(total.ready)} / ${stats(total.warm)}`);

await iam.close();
for (const authorizer of authorizers) await authorizer.close();
for (const server of servers) server.close();
