/**
 * Large policies (issue #14 §5): the compile hands the event loop back every ROLES_PER_TURN roles
 * and builds exactly what the one-shot compile builds; a 10,000-role policy (3.4 MiB) fits the
 * default `policy.maxBytes`.
 */
import { describe, expect, test } from 'vitest';
import { compilePolicy, compilePolicyYielding, ROLES_PER_TURN } from '../../src/engine/compile-policy.js';
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

describe('compilePolicyYielding', () => {
  test('builds the same index as compilePolicy', async () => {
    const policy = bigPolicy(3_500);
    expect(await compilePolicyYielding(policy)).toStrictEqual(compilePolicy(policy));
  });

  test('lets other work run between slices of ROLES_PER_TURN roles', async () => {
    const policy = bigPolicy(ROLES_PER_TURN * 4 + 1);
    let turns = 0;
    let running = true;
    const tick = () => { if (running) { turns++; setImmediate(tick); } };
    setImmediate(tick);
    await compilePolicyYielding(policy);
    running = false;
    expect(turns).toBeGreaterThanOrEqual(4);
  });

  test('a 10,000-role policy fits the default maxBytes', () => {
    const bytes = Buffer.byteLength(JSON.stringify(bigPolicy(10_000)));
    expect(bytes).toBeLessThan(DEFAULT_POLICY.maxBytes);
  });
});
