/**
 * Large policies (issue #14 §5, Hardening II §11): the compile hands the event loop back every
 * ITEMS_PER_TURN roles, service policies or permissions — also inside one role that holds them all —
 * and builds exactly what the one-shot compile builds; a 10,000-role policy (3.4 MiB) fits the
 * default `policy.maxBytes`.
 */
import { describe, expect, test } from 'vitest';
import { compilePolicy, compilePolicyYielding, ITEMS_PER_TURN } from '../../src/engine/compile-policy.js';
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

  test('a 10,000-role policy fits the default maxBytes', () => {
    const bytes = Buffer.byteLength(JSON.stringify(bigPolicy(10_000)));
    expect(bytes).toBeLessThan(DEFAULT_POLICY.maxBytes);
  });
});
