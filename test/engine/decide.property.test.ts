/**
 * Property test: `decide()` (over the compiled policy) agrees with a plain, independent
 * transcription of spec §7's procedure written over the raw role policy (see spec-transcription.ts).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { compilePolicy } from '../../src/engine/compile-policy.js';
import type { DecisionReason } from '../../src/types.js';
import { decide } from './decide-helper.js';
import type { Role } from '../../src/types.js';
import { accessReference, checkDecision, permission, reference, rolePolicy, service, transcription } from './spec-transcription.js';

describe('decide() against a transcription of spec §7', () => {
  test('agrees on custom references (ars[].c) and node ids (ars[].n)', () => {
    let grants = 0;
    let runs = 0;
    const reasons = new Set<DecisionReason>();
    fc.assert(
      fc.property(
        fc.array(accessReference, { maxLength: 6 }),
        rolePolicy,
        fc.constantFrom<'c' | 'n'>('c', 'n'),
        reference,
        service,
        permission,
        (ars, policy, field, ref, svc, perm) => {
          const expected = transcription(ars, field, ref, svc, perm, policy);
          const decision = decide(ars, { field, reference: ref }, svc, perm, compilePolicy(policy));
          checkDecision(decision, expected, ref, svc, perm, policy.changeId);
          runs += 1;
          if (decision.granted) grants += 1;
          reasons.add(decision.reason);
        },
      ),
      { numRuns: 2000 },
    );
    // The generators must exercise every branch, or the property proves little.
    expect(runs).toBeGreaterThanOrEqual(2000);
    expect(grants).toBeGreaterThan(50);
    expect([...reasons].sort()).toEqual(['GRANTED', 'NO_MATCHING_REFERENCE', 'NO_SERVICE_POLICY', 'PERMISSION_NOT_GRANTED', 'ROLE_NOT_IN_POLICY']);
  });

  test('the compiled policy is independent of the raw one: mutating the raw document later changes nothing', () => {
    fc.assert(
      fc.property(fc.array(accessReference, { maxLength: 4 }), rolePolicy, reference, service, permission, (ars, policy, ref, svc, perm) => {
        const copy = structuredClone(policy);
        const compiled = compilePolicy(copy);
        (copy.roles as Role[]).length = 0;
        checkDecision(decide(ars, { field: 'c', reference: ref }, svc, perm, compiled), transcription(ars, 'c', ref, svc, perm, policy), ref, svc, perm, policy.changeId);
      }),
      { numRuns: 500 },
    );
  });
});
