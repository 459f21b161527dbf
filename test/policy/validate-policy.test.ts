/** Shape check of the role policy (spec §2.3): anything malformed rejects the whole document. */
import { describe, expect, test } from 'vitest';
import { isRolePolicy, policyMistake } from '../../src/policy/validate-policy.js';
import { examplePolicy } from '../helpers/policy-server.js';

const sp = { serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: 'vehicle-service', permissions: [{ key: 'READ' }] };
const doc = (roles: unknown): unknown => ({ applicationId: 'app-1', changeId: 'c1', roles });

describe('valid documents', () => {
  test.each<[string, unknown]>([
    ["the spec's example", examplePolicy()],
    ['no roles', doc([])],
    ['a role without servicePolicies (treated as empty)', doc([{ key: 'DRIVER' }])],
    ['a role with servicePolicies null', doc([{ key: 'DRIVER', servicePolicies: null }])],
    ['a service policy without serviceDefinitionSource', doc([{ key: 'DRIVER', servicePolicies: [{ serviceDefinitionKey: 's', permissions: [] }] }])],
    ['unknown extra members', { ...examplePolicy(), extra: 1, roles: [{ key: 'R', note: 'x', servicePolicies: [{ ...sp, more: true }] }] }],
    ['prototype-member names as keys', doc([{ key: '__proto__', servicePolicies: [{ serviceDefinitionKey: 'constructor', permissions: [{ key: 'toString' }] }] }])],
  ])('%s', (_name, value) => {
    expect(policyMistake(value)).toBeUndefined();
    expect(isRolePolicy(value)).toBe(true);
  });
});

describe('malformed documents', () => {
  test.each<[string, unknown, string]>([
    ['null', null, 'policy is not a JSON object'],
    ['an array', [examplePolicy()], 'policy is not a JSON object'],
    ['a string', 'policy', 'policy is not a JSON object'],
    ['applicationId missing', { changeId: 'c1', roles: [] }, 'applicationId is missing'],
    ['applicationId empty', { applicationId: '', changeId: 'c1', roles: [] }, 'applicationId is missing'],
    ['applicationId a number', { applicationId: 1, changeId: 'c1', roles: [] }, 'applicationId is missing'],
    ['changeId missing', { applicationId: 'a', roles: [] }, 'changeId is missing'],
    ['changeId a number', { applicationId: 'a', changeId: 7, roles: [] }, 'changeId is missing'],
    ['roles missing', { applicationId: 'a', changeId: 'c1' }, 'roles is not an array'],
    ['roles an object', doc({ DRIVER: {} }), 'roles is not an array'],
    ['a role that is a string', doc(['DRIVER']), 'roles[0].key is missing'],
    ['a role without key', doc([{ key: 'A' }, { servicePolicies: [] }]), 'roles[1].key is missing'],
    ['a role with an empty key', doc([{ key: '' }]), 'roles[0].key is missing'],
    ['servicePolicies an object', doc([{ key: 'R', servicePolicies: sp }]), 'roles[0].servicePolicies is not an array'],
    ['a service policy without key', doc([{ key: 'R', servicePolicies: [{ permissions: [] }] }]), 'roles[0].servicePolicies[0].serviceDefinitionKey is missing'],
    ['a service policy that is null', doc([{ key: 'R', servicePolicies: [null] }]), 'roles[0].servicePolicies[0].serviceDefinitionKey is missing'],
    ['serviceDefinitionSource a number', doc([{ key: 'R', servicePolicies: [{ ...sp, serviceDefinitionSource: 1 }] }]), 'roles[0].servicePolicies[0].serviceDefinitionSource is not a string'],
    ['permissions missing', doc([{ key: 'R', servicePolicies: [{ serviceDefinitionKey: 's' }] }]), 'roles[0].servicePolicies[0].permissions is not an array'],
    ['a permission that is a string', doc([{ key: 'R', servicePolicies: [{ ...sp, permissions: ['READ'] }] }]), 'roles[0].servicePolicies[0].permissions[0].key is missing'],
    ['a permission with an empty key', doc([{ key: 'R', servicePolicies: [{ ...sp, permissions: [{ key: 'READ' }, { key: '' }] }] }]), 'roles[0].servicePolicies[0].permissions[1].key is missing'],
    ['a permission key that is a number', doc([{ key: 'R', servicePolicies: [{ ...sp, permissions: [{ key: 1 }] }] }]), 'roles[0].servicePolicies[0].permissions[0].key is missing'],
  ])('%s', (_name, value, mistake) => {
    expect(policyMistake(value)).toBe(mistake);
    expect(isRolePolicy(value)).toBe(false);
  });
});
