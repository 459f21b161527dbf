/**
 * The inventory under a service that misuses it, or is simply large: guards made per request with
 * a name the caller chose stop being listed at a bound (and still enforce), the drift warnings stop
 * at a few lines per application and `changeId`, and `status()` does not recompute the "did you
 * mean" suggestions on every call. Real JWKS and policy API on loopback, real signatures.
 */
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { createGuards } from '../../src/adapter/index.js';
import { closest } from '../../src/lib/closest.js';
import { createInventory, MAX_INVENTORY_ENTRIES, MAX_WARNINGS_PER_POLICY } from '../../src/inventory.js';
import { compilePolicy } from '../../src/engine/compile-policy.js';
import { examplePolicy, uniqueApp, useIam, VEHICLE } from '../helpers/index.js';

const UNGRANTED = 'IAM_AUTHZ_UNGRANTED_PERMISSION';
const FULL = 'IAM_AUTHZ_INVENTORY_FULL';
const iam = useIam();
const warnings: (Error & { code?: string })[] = [];
const listen = (w: Error & { code?: string }): void => { warnings.push(w); };

beforeAll(() => { process.on('warning', listen); });
afterAll(() => { process.off('warning', listen); });
afterEach(() => { warnings.length = 0; });

test('30,000 guards named by callers: the inventory stops at its bound, says so, and every guard still enforces', async () => {
  const app = uniqueApp();
  iam.policy = examplePolicy('c1', app);
  const authorizer = iam.authorizer();
  const guards = createGuards<{ vin: string }>(authorizer);
  const owner = iam.bearer({ app, ars: [{ r: ['OWNER'], c: ['VIN=WVW1'] }] });
  // The policy is in hand first, so that every new guard is held against it at once.
  await authorizer.check(owner, { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } });
  const made = Array.from({ length: 30_000 }, (_, i) => guards.requirePermission(`svc-${i}`, 'READ', 'VIN', (req) => req.vin));
  const last = made[made.length - 1]!;
  expect(authorizer.inventory()).toHaveLength(MAX_INVENTORY_ENTRIES);
  expect(authorizer.status().inventory).toEqual({ entries: MAX_INVENTORY_ENTRIES, maxEntries: MAX_INVENTORY_ENTRIES, dropped: 30_000 - MAX_INVENTORY_ENTRIES });
  await new Promise((resolve) => setImmediate(resolve));
  expect(warnings.filter((w) => w.code === FULL)).toHaveLength(1);
  expect(warnings.filter((w) => w.code === FULL)[0]?.message).toMatch(/still enforce/);
  // Ten lines about the application's policy, and one saying the rest are in status().
  const ungranted = warnings.filter((w) => w.code === UNGRANTED);
  expect(ungranted).toHaveLength(MAX_WARNINGS_PER_POLICY + 1);
  expect(ungranted.at(-1)?.message).toMatch(/status\(\) lists them all/);
  // A guard beyond the bound is not listed, and decides as any other.
  await expect(last(owner, { vin: 'WVW1' })).rejects.toMatchObject({ status: 403, code: 'ERR_PERMISSION_DENIED' });
  await expect(last(undefined, { vin: 'WVW1' })).rejects.toMatchObject({ status: 401 });
  const granted = guards.requirePermission(VEHICLE, 'READ', 'VIN', (req) => req.vin);
  await expect(granted(owner, { vin: 'WVW1' })).resolves.toMatchObject({ decision: { granted: true } });
  expect(authorizer.inventory().some((e) => e.service === VEHICLE)).toBe(false);
});

test('a new changeId warns again, within the same bound', async () => {
  const app = uniqueApp();
  iam.policy = examplePolicy('c1', app);
  const authorizer = iam.authorizer({ policy: { ttlMs: 1000, maxStaleMs: 1000, minRefreshIntervalMs: 0 } });
  const guards = createGuards(authorizer);
  for (let i = 0; i < 50; i++) guards.requirePermission(VEHICLE, `P${i}`, 'VIN', () => 'WVW1');
  const owner = iam.bearer({ app, ars: [{ r: ['OWNER'], c: ['VIN=WVW1'] }] });
  const read = { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } };
  await authorizer.check(owner, read);
  await new Promise((resolve) => setImmediate(resolve));
  expect(warnings.filter((w) => w.code === UNGRANTED)).toHaveLength(MAX_WARNINGS_PER_POLICY + 1);
  iam.policy = examplePolicy('c2', app);
  iam.clock.advance(2_500);
  await authorizer.check(owner, read);
  await new Promise((resolve) => setImmediate(resolve));
  expect(warnings.filter((w) => w.code === UNGRANTED)).toHaveLength(2 * (MAX_WARNINGS_PER_POLICY + 1));
  // status() still lists every one.
  expect(Object.values(authorizer.status().applications)[0]?.[app]?.ungranted).toHaveLength(50);
});

test('the "did you mean" suggestions are computed once per application and changeId, not per status() call', () => {
  let suggested = 0;
  const counting = (name: string, candidates: Iterable<string>): string | undefined => {
    suggested += 1;
    return closest(name, candidates);
  };
  const inventory = createInventory(() => undefined, undefined, counting);
  for (let i = 0; i < 40; i++) inventory.register({ service: VEHICLE, permissions: [`PERMISSION_${i}`], any: false, resourceType: 'VIN', mode: 'enforce' });
  const apps = Array.from({ length: 100 }, (_, i) => `app-${i}`);
  for (const app of apps) inventory.policyInForce(compilePolicy(examplePolicy('c1', app)));
  const once = suggested;
  expect(once).toBe(100 * 40);
  for (let call = 0; call < 10; call++) {
    for (const app of apps) expect(inventory.ungranted(app)).toHaveLength(40);
  }
  expect(suggested).toBe(once);
  // A new guard's permission is checked on its own, and the list grows by it.
  inventory.register({ service: VEHICLE, permissions: ['ONE_MORE'], any: false, resourceType: 'VIN', mode: 'enforce' });
  expect(inventory.ungranted('app-0')).toHaveLength(41);
  // What a caller does with a list never changes the next one.
  const list = inventory.ungranted('app-1')!;
  list.length = 0;
  expect(inventory.ungranted('app-1')).toHaveLength(41);
});
