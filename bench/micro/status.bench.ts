/**
 * `npm run bench:status`: what one `authorizer.status()` costs with 100 cached applications and 40
 * guarded permissions that no role grants (each with a "did you mean" to compute). A loopback
 * policy API serves each application a policy of 300 roles, each granting READ and a permission of
 * its own (`VEHICLE_PERMISSION_X<n>`); 40 guards ask for `VEHICLE_PERMISSION_Y<n>`, which none
 * grants and which are all within two edits of the granted names. Prints the median, min and max
 * of 50 calls, in ms, and the same for `inventory()`.
 */
import { performance } from 'node:perf_hooks';
import { generateSigningKey, signJwt } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { createGuards } from '../../src/adapter/index.js';
import { createAuthorizer } from '../../src/index.js';
import type { RolePolicy } from '../../src/types.js';
import { servePolicy, startPolicyServer, VEHICLE } from '../../test/helpers/policy-server.js';
import { summarize } from '../lib/stats.mjs';

const APPS = 100;
const UNGRANTED = 40;
const CALLS = 50;
const BASE = 'https://iam.bench.test';
const ROLES = 300;
const key = generateSigningKey();

function policyOf(app: string): RolePolicy {
  return {
    applicationId: app,
    changeId: 'c1',
    roles: Array.from({ length: ROLES }, (_, i) => ({
      key: i === 0 ? 'OWNER' : `ROLE_${i}`,
      servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: VEHICLE, permissions: [{ key: 'READ' }, { key: `VEHICLE_PERMISSION_X${i}` }] }],
    })),
  };
}
const server = await startPolicyServer();
server.fault = (req, res) => {
  const token = (req.headers.authorization ?? '').slice(7);
  const app = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { app: string }).app;
  servePolicy(req, res, policyOf(app));
  return true;
};
const authorizer = createAuthorizer({ baseUrl: BASE, localJwks: { keys: [key.jwk] }, policyUrl: server.url, policy: { maxApplications: APPS } });
const guards = createGuards(authorizer);
for (let i = 0; i < UNGRANTED; i++) guards.requirePermission(VEHICLE, `VEHICLE_PERMISSION_Y${i}`, 'VIN', () => 'WVW1');
const now = Math.floor(Date.now() / 1000);
for (let a = 0; a < APPS; a++) {
  const token = signJwt({ iss: `${BASE}/authentication/v1`, sub: 'actor', aud: 't', tid: 't', acc: 'acc', app: `app-${a}`, jti: `j${a}`, iat: now, exp: now + 3600, ars: [{ r: ['OWNER'], c: ['VIN=WVW1'] }] }, key, { cty: 't1' });
  await authorizer.check(`Bearer ${token}`, { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } });
}

function time(fn: () => unknown): { median: number; min: number; max: number } {
  const ms: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const start = performance.now();
    fn();
    ms.push(performance.now() - start);
  }
  return summarize(ms);
}

const status = time(() => authorizer.status());
const ungranted = Object.values(authorizer.status().applications)[0]?.['app-0']?.ungranted.length;
console.log(`${APPS} applications, ${UNGRANTED} ungranted permissions each (${String(ungranted)} listed per application)`);
for (const [name, t] of [['status()', status], ['inventory()', time(() => authorizer.inventory())]] as const) {
  console.log(`${name.padEnd(12)} median ${t.median.toFixed(2)} ms  (min ${t.min.toFixed(2)}, max ${t.max.toFixed(2)}) over ${CALLS} calls`);
}
await authorizer.close();
await server.close();
