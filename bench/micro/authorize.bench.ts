/**
 * Decision speed on a warm 500-role policy (issue #3: under 1 µs median per decision) and the hot
 * path of a route guard, cached `authenticate` + warm `authorize` (issue #2: ≥ 500k ops/s):
 *   1. `decide()` — the pure engine on the compiled policy, no I/O, no promise;
 *   2. `authorizer.authorize()` granted — policy cached and fresh, one resolved promise;
 *   3. `authorizer.authorize()` denied (PERMISSION_NOT_GRANTED) — inside the refetch interval, so
 *      the denial is answered from the cache too;
 *   4. `authenticate` (cache hit) + `authorize` — what a guarded request costs before the handler;
 *   5. the same through a route guard (`createGuards().requirePermission`, what every adapter wraps),
 *      to show what the guard adds (issue #14 §4: at most about 2 µs per request).
 * The policy is served once by a loopback HTTP server and then kept (ttlMs of one hour).
 *
 * Run: `npm run bench:authorize`. Not a test: nothing is asserted, the exit code is 0.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAuthorizer } from '../../src/authorizer.js';
import { compilePolicy } from '../../src/engine/compile-policy.js';
import { createGuards } from '../../src/adapter/guards.js';
import { collectRoles, decideForRoles } from '../../src/engine/decide.js';
import type { RolePolicy } from '../../src/types.js';
import { signJwt } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { BASE_URL, ISSUER, createFixture } from '../lib/fixture.js';
import { environmentLine, formatHeader, formatResult, measureInterleaved, type MeasureResult } from '../lib/measure.js';

const ROLES = 500;
const SERVICES = ['vehicle-service', 'fleet-service', 'billing-service', 'charging-service'];
const PERMISSIONS = ['READ', 'WRITE', 'DELETE', 'ADMIN', 'EXPORT'];

/** 500 roles, each granting two to five permissions in two of four services. */
function bigPolicy(): RolePolicy {
  return {
    applicationId: 'app-1',
    changeId: 'bench-1',
    roles: Array.from({ length: ROLES }, (_, i) => ({
      key: `ROLE_${i}`,
      servicePolicies: [SERVICES[i % 4]!, SERVICES[(i + 1) % 4]!].map((service, j) => ({
        serviceDefinitionSource: 'APPLICATION',
        serviceDefinitionKey: service,
        permissions: PERMISSIONS.slice(0, 2 + ((i + j) % 4)).map((key) => ({ key })),
      })),
    })),
  };
}

const policy = bigPolicy();
const body = JSON.stringify(policy);
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', etag: `"${policy.changeId}"` }).end(body);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const policyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/policy/v1/roles`;

// A token with ten access references; the checked VIN is in the last one, with two roles.
const fx = createFixture();
const nowSec = Math.floor(Date.now() / 1000);
const ars = [
  ...Array.from({ length: 9 }, (_, i) => ({ r: [`ROLE_${i * 7}`, `ROLE_${i * 7 + 1}`], c: [`VIN=OTHER${i}`, `FLEET=F${i}`] })),
  { r: ['ROLE_498', 'ROLE_4'], c: ['VIN=WVW1'] },
];
const token = signJwt(
  { jti: 'bench', iss: ISSUER, sub: 'actor-alice', aud: 'tenant-1', tid: 'tenant-1', exp: nowSec + 86_400, iat: nowSec, acc: 'acc-1', app: 'app-1', ars },
  fx.key,
  { cty: 't1' },
);
const authorization = `Bearer ${token}`;

const authorizer = createAuthorizer({ baseUrl: BASE_URL, localJwks: fx.jwks, policyUrl, policy: { ttlMs: 3_600_000, maxStaleMs: 3_600_000, minRefreshIntervalMs: 3_600_000 } });
const identity = await authorizer.authenticate(authorization);
const resource = { type: 'VIN', value: 'WVW1' } as const;
const grantQuery = { service: 'vehicle-service', permission: 'READ', resource };
const denyQuery = { service: 'vehicle-service', permission: 'ADMIN', resource };
const compiled = compilePolicy(policy);
const ref = { field: 'c', reference: 'VIN=WVW1' } as const;
/** The engine alone, as authorize composes it: the roles named for the resource, then the policy lookup. */
const decide = () => decideForRoles(collectRoles(identity.claims.ars, ref), ref.reference, 'vehicle-service', 'READ', compiled);

// 100 queries mixing services, permissions and the token's resources (granted and denied).
const batch = Array.from({ length: 100 }, (_, i) => ({
  service: SERVICES[i % 2]!,
  permission: PERMISSIONS[i % 3]!,
  resource: { type: 'VIN', value: i % 10 === 9 ? 'WVW1' : `OTHER${i % 10}` },
}));

const guard = createGuards<{ params: { vin: string } }>(authorizer).requirePermission('vehicle-service', 'READ', 'VIN', (req) => req.params.vin);
const request = { params: { vin: 'WVW1' } };

// Each case must do what its name says before it is timed.
if ((await guard(authorization, request))?.decision?.granted !== true) throw new Error('the guard did not grant');
const granted = await authorizer.authorize(identity, grantQuery);
const denied = await authorizer.authorize(identity, denyQuery);
if (!granted.granted || denied.granted || denied.reason !== 'PERMISSION_NOT_GRANTED') throw new Error(`unexpected decisions: ${granted.reason}, ${denied.reason}`);
if (!decide().granted) throw new Error('the engine did not grant');
if (!(await authorizer.accessible(identity, { service: 'vehicle-service', permission: 'READ', type: 'VIN' })).includes('WVW1')) throw new Error('accessible misses WVW1');
if ((await authorizer.authorizeMany(identity, batch)).length !== 100) throw new Error('authorizeMany: not 100 decisions');
if ((await authorizer.permissionsFor(identity, { service: 'vehicle-service', resource })).length === 0) throw new Error('permissionsFor: nothing held');

console.log(environmentLine());
console.log(`policy: ${ROLES} roles (${body.length} bytes of JSON); token: ${ars.length} access references, the checked one holds 2 roles\n`);
console.log(formatHeader());
const results = await measureInterleaved([
  { name: 'collectRoles + decideForRoles, pure engine', fn: decide },
  { name: 'authorize, warm, granted', fn: () => authorizer.authorize(identity, grantQuery) },
  { name: 'authorize, warm, denied', fn: () => authorizer.authorize(identity, denyQuery) },
  {
    name: 'authenticate (cache hit) + authorize',
    fn: async () => authorizer.authorize(await authorizer.authenticate(authorization), grantQuery),
  },
  { name: 'route guard: requirePermission (cache hit)', fn: () => guard(authorization, request) },
  { name: 'accessible (VIN, READ), 10 refs', fn: () => authorizer.accessible(identity, { service: 'vehicle-service', permission: 'READ', type: 'VIN' }) },
  { name: 'authorizeMany, 100 queries', fn: () => authorizer.authorizeMany(identity, batch) },
  { name: 'permissionsFor (VIN=WVW1)', fn: () => authorizer.permissionsFor(identity, { service: 'vehicle-service', resource }) },
]);
for (const result of results) console.log(formatResult(result));
const [, warm, , hotPath, guarded] = results as [MeasureResult, MeasureResult, MeasureResult, MeasureResult, MeasureResult, ...MeasureResult[]];
console.log('');
console.log(`warm authorize (granted)                 = ${(warm.nsPerOp / 1000).toFixed(2)} µs median per decision  (target < 1 µs)  ${warm.nsPerOp < 1000 ? 'ok' : 'ABOVE TARGET'}`);
console.log(`cached authenticate + warm authorize     = ${Math.round(hotPath.opsPerSec).toLocaleString('en-US')} ops/s  (target ≥ 500,000)  ${hotPath.opsPerSec >= 500_000 ? 'ok' : 'BELOW TARGET'}`);
console.log(`route guard, whole                       = ${(guarded.nsPerOp / 1000).toFixed(2)} µs per request  (target ≤ 2 µs)  ${guarded.nsPerOp <= 2000 ? 'ok' : 'ABOVE TARGET'}`);

await authorizer.close();
server.close();
