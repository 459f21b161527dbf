/**
 * The drift warning: once per application and new `changeId`, before the request that fetched the
 * policy is answered, every inventoried permission no role grants is an
 * `IAM_AUTHZ_UNGRANTED_PERMISSION` process warning. Real JWKS, policy API and Express app.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { expressAuthz } from '../../adapters/express/index.js';
import type { Authorizer } from '../../src/index.js';
import type { RolePolicy } from '../../src/types.js';
import { examplePolicy, uniqueApp, useIam, VEHICLE, type Clock } from '../helpers/index.js';

const CODE = 'IAM_AUTHZ_UNGRANTED_PERMISSION';
const iam = useIam();
let server: Server | undefined;
const warnings: (Error & { code?: string })[] = [];
const listen = (w: Error & { code?: string }) => { if (w.code === CODE) warnings.push(w); };

beforeAll(() => { process.on('warning', listen); });
afterAll(() => { process.off('warning', listen); });
beforeEach(() => { warnings.length = 0; });
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => { if (server) server.close(() => { resolve(); }); else resolve(); });
  server = undefined;
});

/** The example policy of `app` (DRIVER: READ; OWNER: READ, WRITE), with OWNER's permissions replaced when given. */
function policyOf(app: string, changeId: string, owner?: string[]): RolePolicy {
  const base = examplePolicy(changeId, app);
  if (!owner) return base;
  return { ...base, roles: [{ key: 'OWNER', servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: VEHICLE, permissions: owner.map((key) => ({ key })) }] }] };
}

type Route = [path: string, service: string, permissions: string | string[], mode?: 'report'];

/** An Express app with one GET route per guard; returns its URL, the authorizer and a token of `app`. */
async function start(app: string, routes: Route[]): Promise<{ url: string; authorizer: Authorizer; token: string; clock: Clock }> {
  const authorizer = iam.authorizer({ policy: { ttlMs: 1000, maxStaleMs: 1000, minRefreshIntervalMs: 0 } });
  const { requirePermission, requireAnyPermission } = expressAuthz(authorizer);
  const web = express();
  for (const [path, service, permissions, mode] of routes) {
    const options = mode ? { mode } : {};
    const guard = typeof permissions === 'string'
      ? requirePermission(service, permissions, 'VIN', () => 'WVW1', options)
      : requireAnyPermission(service, permissions, 'VIN', () => 'WVW1', options);
    web.get(path, guard, (_req, res) => { res.json({ ok: true }); });
  }
  server = web.listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  const token = iam.token({ app, ars: [{ r: ['OWNER'], c: ['VIN=WVW1'] }] });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, authorizer, token, clock: iam.clock };
}

const get = (url: string, token: string) => fetch(url, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

test('a typo\'d permission: one warning, before the response, naming service, permission and application; never per request', async () => {
  const app = uniqueApp();
  iam.policy = policyOf(app, 'c1');
  const { url, token } = await start(app, [['/read', VEHICLE, 'READ'], ['/write', VEHICLE, 'WRTIE']]);
  expect(await get(`${url}/write`, token)).toBe(403);
  expect(warnings).toHaveLength(1);
  const [warning] = warnings;
  expect(warning?.message).toContain(`'WRTIE'`);
  expect(warning?.message).toContain(`service '${VEHICLE}'`);
  expect(warning?.message).toContain(`application '${app}'`);
  expect(warning?.message).toContain(`did you mean 'WRITE'`);
  expect(warning?.message).not.toContain(token);
  expect(await get(`${url}/write`, token)).toBe(403);
  expect(await get(`${url}/read`, token)).toBe(200);
  await new Promise((resolve) => setImmediate(resolve));
  expect(warnings).toHaveLength(1);
});

test('the same list is in status() under the application, and at warn on the logger', async () => {
  const app = uniqueApp();
  iam.policy = policyOf(app, 'c1');
  const lines: string[] = [];
  const logger = { debug: () => undefined, info: () => undefined, warn: (_fields: unknown, message: string) => { lines.push(message); }, error: () => undefined };
  const authorizer = iam.authorizer({ logger });
  const { requirePermission } = expressAuthz(authorizer);
  requirePermission(VEHICLE, 'WRTIE', 'VIN', () => 'WVW1');
  const token = iam.token({ app, ars: [{ r: ['OWNER'], c: ['VIN=WVW1'] }] });
  await authorizer.check(`Bearer ${token}`, { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } });
  const entry = Object.values(authorizer.status().applications)[0]?.[app];
  expect(entry?.ungranted).toEqual([{ service: VEHICLE, permission: 'WRTIE', serviceGranted: true, didYouMean: 'WRITE' }]);
  expect(lines).toEqual([expect.stringContaining(`'WRTIE'`)]);
  expect(lines.join('\n')).not.toContain(token);
});

test('a typo\'d service is named as granting nothing, with the service it may mean', async () => {
  const app = uniqueApp();
  iam.policy = policyOf(app, 'c1');
  const { url, token } = await start(app, [['/read', 'vehicle-servcie', 'READ']]);
  expect(await get(`${url}/read`, token)).toBe(403);
  expect(warnings.map((w) => w.message)).toEqual([expect.stringContaining(`no role grants anything in service 'vehicle-servcie' (did you mean '${VEHICLE}'?)`)]);
});

test('a permission dropped in a new changeId warns; granted again, silence; another dropped, only that one', async () => {
  const app = uniqueApp();
  iam.policy = policyOf(app, 'c1');
  const { url, token, clock } = await start(app, [['/read', VEHICLE, 'READ'], ['/write', VEHICLE, 'WRITE']]);
  expect(await get(`${url}/read`, token)).toBe(200);
  expect(warnings).toEqual([]);
  // Past ttlMs + maxStaleMs: the next request fetches the new changeId and is answered after the check.
  iam.policy = policyOf(app, 'c2', ['READ']);
  clock.advance(5000);
  expect(await get(`${url}/read`, token)).toBe(200);
  expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(/'WRITE' of service 'vehicle-service'/)]);
  expect(await get(`${url}/write`, token)).toBe(403);
  expect(warnings).toHaveLength(1);
  iam.policy = policyOf(app, 'c3', ['READ', 'WRITE']);
  clock.advance(5000);
  expect(await get(`${url}/write`, token)).toBe(200);
  expect(warnings).toHaveLength(1);
  iam.policy = policyOf(app, 'c4', ['WRITE']);
  clock.advance(5000);
  expect(await get(`${url}/write`, token)).toBe(200);
  expect(warnings.slice(1).map((w) => w.message)).toEqual([expect.stringMatching(/'READ' of service 'vehicle-service'/)]);
});

test('a report-mode guard is inventoried as such and warned about; its request goes on', async () => {
  const app = uniqueApp();
  iam.policy = policyOf(app, 'c1');
  const { url, token, authorizer } = await start(app, [['/audit', VEHICLE, 'AUDIT', 'report']]);
  expect(authorizer.inventory()).toEqual([{ service: VEHICLE, permission: 'AUDIT', resourceType: 'VIN', mode: 'report' }]);
  expect(await get(`${url}/audit`, token)).toBe(200);
  expect(warnings.map((w) => w.message)).toEqual([expect.stringContaining(`'AUDIT' of service '${VEHICLE}'`)]);
});

test('every permission of an any-of guard counts on its own', async () => {
  const app = uniqueApp();
  iam.policy = policyOf(app, 'c1');
  const { url, token, authorizer } = await start(app, [['/any', VEHICLE, ['WRITE', 'DELETE']]]);
  expect(await get(`${url}/any`, token)).toBe(200);
  expect(warnings.map((w) => w.message)).toEqual([expect.stringContaining(`'DELETE' of service '${VEHICLE}'`)]);
  expect(authorizer.ungranted(app)).toEqual([{ service: VEHICLE, permission: 'DELETE', serviceGranted: true }]);
});

test('a policy that grants everything inventoried: silence', async () => {
  const app = uniqueApp();
  iam.policy = policyOf(app, 'c1');
  const { url, token, authorizer } = await start(app, [['/read', VEHICLE, 'READ'], ['/write', VEHICLE, 'WRITE'], ['/any', VEHICLE, ['WRITE', 'READ']]]);
  expect(await get(`${url}/read`, token)).toBe(200);
  expect(await get(`${url}/write`, token)).toBe(200);
  await new Promise((resolve) => setImmediate(resolve));
  expect(warnings).toEqual([]);
  expect(authorizer.ungranted(app)).toEqual([]);
  expect(authorizer.ungranted('never-fetched')).toBeUndefined();
});

test('a guard made after the policy was fetched is checked against the policy in hand', async () => {
  const app = uniqueApp();
  iam.policy = policyOf(app, 'c1');
  const { url, token, authorizer } = await start(app, [['/read', VEHICLE, 'READ']]);
  expect(await get(`${url}/read`, token)).toBe(200);
  expect(warnings).toEqual([]);
  expressAuthz(authorizer).requirePermission(VEHICLE, 'raed', 'VIN', () => 'WVW1');
  await new Promise((resolve) => setImmediate(resolve));
  expect(warnings.map((w) => w.message)).toEqual([expect.stringContaining(`'raed' of service '${VEHICLE}' (did you mean 'READ'?)`)]);
});
