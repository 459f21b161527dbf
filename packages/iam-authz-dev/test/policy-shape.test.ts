/**
 * The development kit's check of a role policy document (`rolePolicyMistake`, used by
 * `iam-authz check`) is a copy of the library's, which is not a public name: the two must agree on
 * every document, or the CLI would pass a policy the library refuses (or the other way round).
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { policyMistake } from '../../../src/policy/validate-policy.js';
import { rolePolicyMistake } from '../src/policy.js';

const text = fc.constantFrom('', 'READ', 'vehicle-service', 'APPLICATION');
const odd = fc.constantFrom(null, 1, true, [], {});
/** Mostly right, sometimes not: so that the checks reach deep into valid documents. */
const mostly = <T>(right: fc.Arbitrary<T>) => fc.oneof({ arbitrary: right, weight: 6 }, { arbitrary: odd, weight: 1 });
const permission = mostly(fc.record({ key: mostly(text) }));
const servicePolicy = mostly(
  fc.record({ serviceDefinitionKey: mostly(text), serviceDefinitionSource: mostly(text), permissions: mostly(fc.array(permission, { maxLength: 3 })) }, { requiredKeys: ['serviceDefinitionKey'] }),
);
const role = mostly(fc.record({ key: mostly(text), servicePolicies: mostly(fc.array(servicePolicy, { maxLength: 3 })) }, { requiredKeys: [] }));
const policy = fc.oneof(
  fc.record({ applicationId: mostly(text), changeId: mostly(text), roles: mostly(fc.array(role, { maxLength: 3 })) }, { requiredKeys: [] }),
  fc.jsonValue({ maxDepth: 3 }),
);

test('the dev kit and the library find the same first mistake in any policy document', () => {
  fc.assert(fc.property(policy, (value) => {
    const library = policyMistake(value);
    const devKit = rolePolicyMistake(value);
    expect(devKit === undefined).toBe(library === undefined);
    if (library !== undefined) expect(devKit).toBe(library === 'policy is not a JSON object' ? 'it is not a JSON object' : library);
  }), { numRuns: 2_000 });
});
