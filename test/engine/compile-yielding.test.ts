/**
 * Large policies (issue #14 §5, Hardening II §11): the compile hands the event loop back every
 * ITEMS_PER_TURN roles, service policies or permissions — also inside one role that holds them all —
 * and builds exactly what the one-shot compile builds; a 10,000-role policy (3.4 MiB) fits the
 * default `policy.maxBytes`.
 */
import { describe, expect, test } from 'vitest';
import { compilePolicy, compilePolicyYielding, ITEMS_PER_TURN, SHARD_THRESHOLD, ShardedMap, ShardedSet } from '../../src/engine/compile-policy.js';
import { decideForRoles } from '../../src/engine/decide.js';
import { permissionsOf } from '../../src/engine/permissions.js';
import { DEFAULT_POLICY } from '../../src/policy/options.js';
import type { RolePolicy } from '../../src/types.js';

function bigPolicy(roles: number): RolePolicy {
  return {
    applicationId: 'app-1',
    changeId: 'c1',
    roles: Array.from({ length: roles }, (_, i) => ({
      key: `ROLE_${i % (roles - 7)}`, // a few keys repeat: later entries add to earlier ones
      servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: `svc-${i % 4}`, permissions: [{ key: 'READ' }, { key: `P${i % 5}` }] }],
    })),
  };
}

/** The worst shape: one role holding every permission. */
function oneRolePolicy(permissions: number): RolePolicy {
  return {
    applicationId: 'app-1',
    changeId: 'c1',
    roles: [{ key: 'ADMIN', servicePolicies: [{ serviceDefinitionKey: 'svc', permissions: Array.from({ length: permissions }, (_, i) => ({ key: `P${i}` })) }] }],
  };
}

/** Runs the compile with a counting `yieldTurn`: how many times it handed the loop back. */
async function countTurns(policy: RolePolicy): Promise<{ turns: number; compiled: unknown }> {
  let turns = 0;
  const compiled = await compilePolicyYielding(policy, () => { turns += 1; return Promise.resolve(); });
  return { turns, compiled };
}

describe('compilePolicyYielding', () => {
  test('builds the same index as compilePolicy', async () => {
    const policy = bigPolicy(3_500);
    expect(await compilePolicyYielding(policy)).toStrictEqual(compilePolicy(policy));
  });

  test('lets other work run between slices (setImmediate turns)', async () => {
    const policy = oneRolePolicy(ITEMS_PER_TURN * 4 + 1);
    let turns = 0;
    let running = true;
    const tick = () => { if (running) { turns++; setImmediate(tick); } };
    setImmediate(tick);
    await compilePolicyYielding(policy);
    running = false;
    expect(turns).toBeGreaterThanOrEqual(4);
  });

  test('counts work in permissions: one role with many permissions is compiled in slices of ITEMS_PER_TURN', async () => {
    const permissions = ITEMS_PER_TURN * 10;
    const { turns, compiled } = await countTurns(oneRolePolicy(permissions));
    // 1 role + 1 service policy + N permissions, one yield per ITEMS_PER_TURN of them.
    expect(turns).toBe(Math.floor((permissions + 2) / ITEMS_PER_TURN));
    expect(compiled).toStrictEqual(compilePolicy(oneRolePolicy(permissions)));
  });

  test('counts work in service policies too: one role with many empty service policies', async () => {
    const policy: RolePolicy = { applicationId: 'a', changeId: 'c', roles: [{ key: 'R', servicePolicies: Array.from({ length: ITEMS_PER_TURN * 3 }, (_, i) => ({ serviceDefinitionKey: `s${i}`, permissions: [] })) }] };
    const { turns } = await countTurns(policy);
    expect(turns).toBe(3);
  });

  test('no table grows past SHARD_THRESHOLD entries (a V8 rehash is one long stall): large ones are split, and answer the same', async () => {
    const n = SHARD_THRESHOLD * 3;
    const permissions = await compilePolicyYielding(oneRolePolicy(n));
    const set = permissions.roles.get('ADMIN')?.get('svc');
    expect(set).toBeInstanceOf(ShardedSet);
    expect(set?.size).toBe(n);
    for (const i of [0, 1, SHARD_THRESHOLD, n - 1]) expect(set?.has(`P${i}`)).toBe(true);
    expect(set?.has(`P${n}`)).toBe(false);
    expect(set?.has('')).toBe(false);
    expect(new Set(set)).toStrictEqual(new Set(Array.from({ length: n }, (_, i) => `P${i}`)));
    expect(permissionsOf(['ADMIN'], 'svc', permissions)).toHaveLength(n);

    const manyRoles: RolePolicy = { applicationId: 'a', changeId: 'c', roles: Array.from({ length: n }, (_, i) => ({ key: `R${i}`, servicePolicies: [{ serviceDefinitionKey: 's', permissions: [{ key: 'READ' }] }, { serviceDefinitionKey: 's', permissions: [{ key: `W${i % 3}` }] }] })) };
    const compiled = await compilePolicyYielding(manyRoles);
    expect(compiled.roles).toBeInstanceOf(ShardedMap);
    expect(compiled.roles.size).toBe(n);
    expect([...compiled.roles.keys()].sort()).toStrictEqual(manyRoles.roles.map((r) => r.key).sort());
    expect(compiled.roles.get(`R${n - 1}`)?.get('s')).toStrictEqual(new Set(['READ', `W${(n - 1) % 3}`]));
    expect(decideForRoles([`R${n - 2}`], 'VIN=1', 's', `W${(n - 2) % 3}`, compiled)).toMatchObject({ granted: true });
    expect(decideForRoles([`R${n - 2}`], 'VIN=1', 's', 'DELETE', compiled)).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED' });
    expect(decideForRoles([`R${n}`], 'VIN=1', 's', 'READ', compiled)).toMatchObject({ granted: false, reason: 'ROLE_NOT_IN_POLICY' });

    const manyServices: RolePolicy = { applicationId: 'a', changeId: 'c', roles: [{ key: 'R', servicePolicies: Array.from({ length: n }, (_, i) => ({ serviceDefinitionKey: `s${i}`, permissions: [{ key: 'READ' }] })) }] };
    const services = (await compilePolicyYielding(manyServices)).roles.get('R');
    expect(services).toBeInstanceOf(ShardedMap);
    expect(services?.get(`s${n - 1}`)?.has('READ')).toBe(true);
    expect(services?.get(`s${n}`)).toBeUndefined();
  });

  test('a 10,000-role policy fits the default maxBytes', () => {
    const bytes = Buffer.byteLength(JSON.stringify(bigPolicy(10_000)));
    expect(bytes).toBeLessThan(DEFAULT_POLICY.maxBytes);
  });
});
