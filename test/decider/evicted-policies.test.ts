/**
 * Memory for policies is bounded by `policy.maxApplications`: an application evicted from the
 * policy cache leaves no compiled policy behind (the inventory's drift check, the grant memo), and
 * neither does a policy replaced by a new `changeId`. Real JWKS and policy API on loopback.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, test } from 'vitest';
import { createGuards } from '../../src/adapter/index.js';
import type { RolePolicy } from '../../src/types.js';
import { useIam, VEHICLE } from '../helpers/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const iam = useIam();

/** A policy of `roles` roles, each granting READ and a role-specific permission. */
function bigPolicy(app: string, roles: number, changeId = 'c1'): RolePolicy {
  return {
    applicationId: app,
    changeId,
    roles: Array.from({ length: roles }, (_, i) => ({
      key: `ROLE_${app}_${i}`,
      servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: VEHICLE, permissions: [{ key: 'READ' }, { key: `P_${app}_${i}` }] }],
    })),
  };
}

function heap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

test('500 applications of 300 roles through a cache of 5: the heap grows by what 5 hold, not 500', async () => {
  const authorizer = iam.authorizer({ policy: { maxApplications: 5 } });
  // A guard, so that the inventory's drift check runs against every policy.
  createGuards(authorizer).requirePermission(VEHICLE, 'READ', 'VIN', () => 'WVW1');
  iam.policy = (app) => bigPolicy(app, 300);
  const read = { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } };
  const ask = async (i: number): Promise<void> => {
    const app = `evict-${i}`;
    const identity = await authorizer.authenticate(iam.bearer({ app, ars: [{ r: [`ROLE_${app}_0`], c: ['VIN=WVW1'] }] }));
    // Twice: the second grant is remembered by the grant memo.
    expect((await authorizer.authorize(identity, read)).granted).toBe(true);
    expect((await authorizer.authorize(identity, read)).granted).toBe(true);
  };
  for (let i = 0; i < 20; i++) await ask(i);
  const before = heap();
  for (let i = 20; i < 500; i++) await ask(i);
  const grown = heap() - before;
  // Before the bound held, the same run grew the heap by about 56 MB.
  expect(grown).toBeLessThan(8 * 1024 * 1024);
  const held = Object.values(authorizer.status().applications)[0]!;
  expect(Object.keys(held)).toHaveLength(5);
  expect(authorizer.ungranted('evict-0')).toBeUndefined();
  expect(authorizer.ungranted('evict-499')).toEqual([]);
}, 60_000);

test('a policy replaced by a new changeId is not kept by the grant memo', async () => {
  const authorizer = iam.authorizer({ policy: { ttlMs: 1_000, maxStaleMs: 1_000, minRefreshIntervalMs: 0 } });
  const app = 'replaced-app';
  const ROUNDS = 120;
  let changeId = 0;
  iam.policy = () => bigPolicy(app, 300, `c${changeId}`);
  // One value per round, each ending in another character: the grant memo keeps each in a slot of its own.
  const values = Array.from({ length: ROUNDS + 1 }, (_, i) => `V${String.fromCharCode(0x100 + i)}`);
  const identity = await authorizer.authenticate(iam.bearer({ app, ars: [{ r: [`ROLE_${app}_0`], c: values.map((v) => `VIN=${v}`) }] }));
  const ask = async (value: string): Promise<void> => {
    const query = { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value } };
    // The first may fetch, the second is noted, the third remembered.
    for (let i = 0; i < 3; i++) expect((await authorizer.authorize(identity, query)).granted).toBe(true);
  };
  await ask(values[0]!);
  const before = heap();
  for (let round = 1; round <= ROUNDS; round++) {
    changeId += 1;
    iam.clock.advance(2_500);
    await ask(values[round]!);
  }
  expect(heap() - before).toBeLessThan(8 * 1024 * 1024);
}, 60_000);
