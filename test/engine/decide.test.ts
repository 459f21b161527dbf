/**
 * The permission check of spec §7 (steps 4–7) as a pure function: the spec's illustration, every
 * reason code, exact-string matching, isolation between access references, node ids, and names
 * that would be prototype members of a plain object.
 */
import { describe, expect, test } from 'vitest';
import { compilePolicy } from '../../src/engine/compile-policy.js';
import { collectRoles, decideForRoles, noMatchingReference, type ResourceRef } from '../../src/engine/decide.js';
import type { Decision } from '../../src/types.js';
import { decide } from './decide-helper.js';
import { toResourceRef } from '../../src/engine/resource.js';
import type { RolePolicy, ServicePolicy } from '../../src/types.js';
import type { AccessReference } from '../../src/types.js';

const VEHICLE = 'vehicle-service';

function sp(service: string, ...permissions: string[]): ServicePolicy {
  return { serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: service, permissions: permissions.map((key) => ({ key })) };
}

function policyOf(roles: RolePolicy['roles'], changeId = 'c1'): RolePolicy {
  return { applicationId: 'app-1', changeId, roles };
}

/** The spec's example configuration. */
const SPEC = compilePolicy(policyOf([
  { key: 'DRIVER', servicePolicies: [sp(VEHICLE, 'READ')] },
  { key: 'OWNER', servicePolicies: [sp(VEHICLE, 'READ', 'WRITE')] },
]));

function ar(r: string[], c: string[] = [], n: string[] = []): AccessReference {
  return { r, c, n };
}

const c = (reference: string): ResourceRef => ({ field: 'c', reference });
const node = (reference: string): ResourceRef => ({ field: 'n', reference });

describe("the spec's illustration", () => {
  const vin = c('VIN=WVW1');

  test('DRIVER may read', () => {
    expect(decide([ar(['DRIVER'], ['VIN=WVW1'])], vin, VEHICLE, 'READ', SPEC)).toEqual<Decision>({
      granted: true, reference: 'VIN=WVW1', roles: ['DRIVER'], grantedBy: { role: 'DRIVER', service: VEHICLE, permission: 'READ' }, changeId: 'c1', reason: 'GRANTED',
    });
  });

  test('DRIVER may not write', () => {
    expect(decide([ar(['DRIVER'], ['VIN=WVW1'])], vin, VEHICLE, 'WRITE', SPEC)).toEqual<Decision>({
      granted: false, reference: 'VIN=WVW1', roles: ['DRIVER'], changeId: 'c1', reason: 'PERMISSION_NOT_GRANTED',
    });
  });

  test.each(['READ', 'WRITE'])('OWNER may %s', (permission) => {
    const d = decide([ar(['OWNER'], ['VIN=WVW1'])], vin, VEHICLE, permission, SPEC);
    expect(d).toMatchObject({ granted: true, reason: 'GRANTED', grantedBy: { role: 'OWNER', service: VEHICLE, permission } });
  });

  test('a permission the service does not define is never granted', () => {
    expect(decide([ar(['OWNER'], ['VIN=WVW1'])], vin, VEHICLE, 'DELETE', SPEC).reason).toBe('PERMISSION_NOT_GRANTED');
  });

  test('DRIVER and OWNER together: WRITE is granted by OWNER', () => {
    const d = decide([ar(['DRIVER', 'OWNER'], ['VIN=WVW1'])], vin, VEHICLE, 'WRITE', SPEC);
    expect(d).toMatchObject({ granted: true, roles: ['DRIVER', 'OWNER'], grantedBy: { role: 'OWNER' } });
  });
});

describe('reason codes', () => {
  const vin = c('VIN=1');
  const policy = compilePolicy(policyOf([
    { key: 'NOSP' },
    { key: 'OTHER', servicePolicies: [sp('other-service', 'READ')] },
    { key: 'EMPTY', servicePolicies: [sp(VEHICLE)] },
    { key: 'READER', servicePolicies: [sp(VEHICLE, 'READ')] },
  ], 'c9'));

  test.each<[string, AccessReference[], Decision['reason']]>([
    ['no ars at all', [], 'NO_MATCHING_REFERENCE'],
    ['ars name other resources only', [ar(['READER'], ['VIN=2']), ar(['READER'], [], ['VIN=1'])], 'NO_MATCHING_REFERENCE'],
    ['the reference is named with no roles', [ar([], ['VIN=1'])], 'NO_MATCHING_REFERENCE'],
    ['the roles are unknown to the policy', [ar(['GHOST', 'SPOOK'], ['VIN=1'])], 'ROLE_NOT_IN_POLICY'],
    ['the role has no servicePolicies member', [ar(['NOSP'], ['VIN=1'])], 'NO_SERVICE_POLICY'],
    ['the role only has a policy for another service', [ar(['OTHER', 'NOSP', 'GHOST'], ['VIN=1'])], 'NO_SERVICE_POLICY'],
    ['the service policy lists no permission', [ar(['EMPTY'], ['VIN=1'])], 'PERMISSION_NOT_GRANTED'],
    ['the service policy lists other permissions', [ar(['READER', 'GHOST'], ['VIN=1'])], 'PERMISSION_NOT_GRANTED'],
  ])('%s → %s', (_name, ars, reason) => {
    const d = decide(ars, vin, VEHICLE, 'WRITE', policy);
    expect(d.granted).toBe(false);
    expect(d.reason).toBe(reason);
    expect(d.grantedBy).toBeUndefined();
    expect(d.changeId).toBe('c9');
    expect(d.reference).toBe('VIN=1');
  });

  test('GRANTED names the first role in token order that grants', () => {
    const d = decide([ar(['GHOST', 'NOSP', 'READER'], ['VIN=1'])], vin, VEHICLE, 'READ', policy);
    expect(d).toEqual<Decision>({
      granted: true, reference: 'VIN=1', roles: ['GHOST', 'NOSP', 'READER'], grantedBy: { role: 'READER', service: VEHICLE, permission: 'READ' }, changeId: 'c9', reason: 'GRANTED',
    });
  });

  test('noMatchingReference carries the given changeId and no roles', () => {
    expect(noMatchingReference('VIN=1', undefined)).toEqual<Decision>({ granted: false, reference: 'VIN=1', roles: [], changeId: undefined, reason: 'NO_MATCHING_REFERENCE' });
  });

  test('decideForRoles with the roles of decide gives the same decision', () => {
    const ars = [ar(['OTHER'], ['VIN=1']), ar(['READER'], ['VIN=1'])];
    const roles = collectRoles(ars, vin);
    expect(decideForRoles(roles, 'VIN=1', VEHICLE, 'READ', policy)).toEqual(decide(ars, vin, VEHICLE, 'READ', policy));
  });
});

describe('exact-string matching', () => {
  const nfc = 'Ger\u00e4t';
  const nfd = 'Gera\u0308t';

  test('the two forms really differ as strings but are canonically equal', () => {
    expect(nfc).not.toBe(nfd);
    expect(nfc.normalize('NFC')).toBe(nfd.normalize('NFC'));
  });

  test.each<[string, string, string]>([
    ['type case', 'VIN=WVW1', 'vin=WVW1'],
    ['value case', 'VIN=WVW1', 'VIN=wvw1'],
    ['Unicode NFC in the token, NFD asked', `VIN=${nfc}`, `VIN=${nfd}`],
    ['Unicode NFD in the token, NFC asked', `VIN=${nfd}`, `VIN=${nfc}`],
    ['trailing space in the token', 'VIN=WVW1 ', 'VIN=WVW1'],
    ['leading space asked', 'VIN=WVW1', ' VIN=WVW1'],
    ['space around "="', 'VIN = WVW1', 'VIN=WVW1'],
    ['a prefix of the reference', 'VIN=WVW12', 'VIN=WVW1'],
    ['an extension of the reference', 'VIN=WVW1', 'VIN=WVW12'],
    ['a tab instead of nothing', 'VIN=WVW1\t', 'VIN=WVW1'],
    ['zero-width space', 'VIN=WVW\u200b1', 'VIN=WVW1'],
  ])('resource reference: %s does not match', (_name, inToken, asked) => {
    expect(decide([ar(['OWNER'], [inToken])], c(asked), VEHICLE, 'READ', SPEC).reason).toBe('NO_MATCHING_REFERENCE');
    expect(decide([ar(['OWNER'], [inToken])], c(inToken), VEHICLE, 'READ', SPEC).granted).toBe(true);
  });

  test.each<[string, string]>([
    ['case', 'owner'],
    ['trailing space', 'OWNER '],
    ['leading space', ' OWNER'],
    ['NFD form', nfd],
  ])('role key: %s does not match', (_name, role) => {
    const policy = compilePolicy(policyOf([{ key: 'OWNER', servicePolicies: [sp(VEHICLE, 'READ')] }, { key: nfc, servicePolicies: [sp(VEHICLE, 'READ')] }]));
    expect(decide([ar([role], ['VIN=1'])], c('VIN=1'), VEHICLE, 'READ', policy).reason).toBe('ROLE_NOT_IN_POLICY');
  });

  test.each<[string, string]>([
    ['case', 'Vehicle-Service'],
    ['trailing space', `${VEHICLE} `],
    ['NFD form', `${nfd}-service`],
  ])('service key: %s does not match', (_name, service) => {
    const policy = compilePolicy(policyOf([{ key: 'OWNER', servicePolicies: [sp(VEHICLE, 'READ'), sp(`${nfc}-service`, 'READ')] }]));
    expect(decide([ar(['OWNER'], ['VIN=1'])], c('VIN=1'), service, 'READ', policy).reason).toBe('NO_SERVICE_POLICY');
  });

  test.each<[string, string]>([
    ['case', 'read'],
    ['trailing space', 'READ '],
    ['NFD form', nfd],
  ])('permission key: %s does not match', (_name, permission) => {
    const policy = compilePolicy(policyOf([{ key: 'OWNER', servicePolicies: [sp(VEHICLE, 'READ', nfc)] }]));
    expect(decide([ar(['OWNER'], ['VIN=1'])], c('VIN=1'), VEHICLE, permission, policy).reason).toBe('PERMISSION_NOT_GRANTED');
  });

  test('values may contain "=": the whole string after the first "=" is the value', () => {
    const ref = toResourceRef({ type: 'VIN', value: 'a=b==' });
    expect(ref).toEqual({ field: 'c', reference: 'VIN=a=b==' });
    expect(decide([ar(['OWNER'], ['VIN=a=b=='])], ref!, VEHICLE, 'WRITE', SPEC).granted).toBe(true);
    expect(decide([ar(['OWNER'], ['VIN=a=b='])], ref!, VEHICLE, 'WRITE', SPEC).reason).toBe('NO_MATCHING_REFERENCE');
    expect(decide([ar(['OWNER'], ['VIN=a'])], ref!, VEHICLE, 'WRITE', SPEC).reason).toBe('NO_MATCHING_REFERENCE');
  });

  test('a type containing "=" is unusable (it would be ambiguous), so it names no resource', () => {
    expect(toResourceRef({ type: 'VIN=a', value: 'b' })).toBeUndefined();
    expect(toResourceRef({ type: '', value: 'b' })).toBeUndefined();
    expect(toResourceRef({ type: 'VIN', value: '' })).toBeUndefined();
    expect(toResourceRef({ node: '' })).toBeUndefined();
    expect(toResourceRef(undefined)).toBeUndefined();
    expect(toResourceRef(null as never)).toBeUndefined();
    expect(toResourceRef({ type: 1, value: 'x' } as never)).toBeUndefined();
    expect(toResourceRef({ node: 7 } as never)).toBeUndefined();
  });
});

describe('isolation between access references', () => {
  const ars = [ar(['OWNER'], ['VIN=2']), ar(['DRIVER'], ['VIN=1'])];

  test("the OWNER role of VIN=2 does not let the caller write VIN=1", () => {
    const d = decide(ars, c('VIN=1'), VEHICLE, 'WRITE', SPEC);
    expect(d).toMatchObject({ granted: false, roles: ['DRIVER'], reason: 'PERMISSION_NOT_GRANTED' });
  });

  test('but does on VIN=2', () => {
    expect(decide(ars, c('VIN=2'), VEHICLE, 'WRITE', SPEC)).toMatchObject({ granted: true, roles: ['OWNER'] });
  });

  test('roles of several references naming the resource are merged, without duplicates, in token order', () => {
    const many = [ar(['DRIVER', 'X'], ['VIN=1']), ar(['OWNER'], ['VIN=9']), ar(['X', 'OWNER', 'DRIVER'], ['VIN=0', 'VIN=1'])];
    expect(collectRoles(many, c('VIN=1'))).toEqual(['DRIVER', 'X', 'OWNER']);
  });

  test('more than 16 distinct roles are still deduplicated and kept in order', () => {
    const names = Array.from({ length: 40 }, (_, i) => `R${i}`);
    const many = [ar(names.slice(0, 25), ['VIN=1']), ar([...names].reverse(), ['VIN=1']), ar(['R3', 'R30'], ['VIN=1'])];
    expect(collectRoles(many, c('VIN=1'))).toEqual([...names.slice(0, 25), ...names.slice(25).reverse()]);
  });

  test('a custom reference never matches a node id with the same text, and vice versa', () => {
    expect(decide([ar(['OWNER'], [], ['VIN=1'])], c('VIN=1'), VEHICLE, 'READ', SPEC).reason).toBe('NO_MATCHING_REFERENCE');
    expect(decide([ar(['OWNER'], ['node-7'])], node('node-7'), VEHICLE, 'READ', SPEC).reason).toBe('NO_MATCHING_REFERENCE');
  });
});

describe('node ids ({ node } → ars[].n)', () => {
  test('a node id grants through the roles connected to it', () => {
    const ars = [ar(['OWNER'], [], ['node-7']), ar(['DRIVER'], [], ['node-8'])];
    expect(toResourceRef({ node: 'node-7' })).toEqual({ field: 'n', reference: 'node-7' });
    expect(decide(ars, node('node-7'), VEHICLE, 'WRITE', SPEC)).toMatchObject({ granted: true, reference: 'node-7', roles: ['OWNER'] });
    expect(decide(ars, node('node-8'), VEHICLE, 'WRITE', SPEC)).toMatchObject({ granted: false, roles: ['DRIVER'], reason: 'PERMISSION_NOT_GRANTED' });
    expect(decide(ars, node('node-9'), VEHICLE, 'READ', SPEC).reason).toBe('NO_MATCHING_REFERENCE');
    expect(decide(ars, node('NODE-7'), VEHICLE, 'READ', SPEC).reason).toBe('NO_MATCHING_REFERENCE');
  });

  test('an access reference with both n and c applies to both', () => {
    const ars = [ar(['OWNER'], ['VIN=1'], ['node-7'])];
    expect(decide(ars, node('node-7'), VEHICLE, 'WRITE', SPEC).granted).toBe(true);
    expect(decide(ars, c('VIN=1'), VEHICLE, 'WRITE', SPEC).granted).toBe(true);
  });
});

describe('names that are prototype members of plain objects', () => {
  const HOSTILE = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'prototype'];

  test.each(HOSTILE)('role %s is not in a policy that does not list it', (name) => {
    expect(decide([ar([name], ['VIN=1'])], c('VIN=1'), VEHICLE, 'READ', SPEC).reason).toBe('ROLE_NOT_IN_POLICY');
  });

  test.each(HOSTILE)('service %s has no service policy unless listed', (name) => {
    expect(decide([ar(['OWNER'], ['VIN=1'])], c('VIN=1'), name, 'READ', SPEC).reason).toBe('NO_SERVICE_POLICY');
  });

  test.each(HOSTILE)('permission %s is not granted unless listed', (name) => {
    expect(decide([ar(['OWNER'], ['VIN=1'])], c('VIN=1'), VEHICLE, name, SPEC).reason).toBe('PERMISSION_NOT_GRANTED');
  });

  test.each(HOSTILE)('resource %s (node id) matches only where listed', (name) => {
    expect(decide([ar(['OWNER'], [name], [])], node(name), VEHICLE, 'READ', SPEC).reason).toBe('NO_MATCHING_REFERENCE');
    expect(decide([ar(['OWNER'], [], [name])], node(name), VEHICLE, 'READ', SPEC).granted).toBe(true);
  });

  test.each(HOSTILE)('%s as role, service and permission grants when really listed', (name) => {
    const policy = compilePolicy(policyOf([{ key: name, servicePolicies: [sp(name, name)] }]));
    expect(decide([ar([name], ['VIN=1'])], c('VIN=1'), name, name, policy)).toMatchObject({ granted: true, grantedBy: { role: name, service: name, permission: name } });
    expect(decide([ar([name], ['VIN=1'])], c('VIN=1'), name, 'READ', policy).reason).toBe('PERMISSION_NOT_GRANTED');
    expect(decide([ar([name], ['VIN=1'])], c('VIN=1'), VEHICLE, name, policy).reason).toBe('NO_SERVICE_POLICY');
    expect(decide([ar(['OWNER'], ['VIN=1'])], c('VIN=1'), name, name, policy).reason).toBe('ROLE_NOT_IN_POLICY');
  });

  test('a policy parsed from JSON with a "__proto__" role key grants only to that role', () => {
    const raw = JSON.parse('{"applicationId":"app-1","changeId":"c1","roles":[{"key":"__proto__","servicePolicies":[{"serviceDefinitionKey":"__proto__","permissions":[{"key":"__proto__"}]}]}]}') as RolePolicy;
    const policy = compilePolicy(raw);
    expect(decide([ar(['__proto__'], ['VIN=1'])], c('VIN=1'), '__proto__', '__proto__', policy).granted).toBe(true);
    expect(decide([ar(['constructor'], ['VIN=1'])], c('VIN=1'), '__proto__', '__proto__', policy).reason).toBe('ROLE_NOT_IN_POLICY');
    expect(Object.prototype).not.toHaveProperty('READ');
  });
});

describe('compiling the policy', () => {
  test('absent servicePolicies is empty: the role exists but grants nothing', () => {
    const policy = compilePolicy(policyOf([{ key: 'DRIVER' }]));
    expect(policy.roles.get('DRIVER')?.size).toBe(0);
    expect(decide([ar(['DRIVER'], ['VIN=1'])], c('VIN=1'), VEHICLE, 'READ', policy).reason).toBe('NO_SERVICE_POLICY');
  });

  test('an empty policy knows no role', () => {
    expect(decide([ar(['DRIVER'], ['VIN=1'])], c('VIN=1'), VEHICLE, 'READ', compilePolicy(policyOf([]))).reason).toBe('ROLE_NOT_IN_POLICY');
  });

  test('a role listed twice, or a service listed twice, grants the union', () => {
    const policy = compilePolicy(policyOf([
      { key: 'R', servicePolicies: [sp(VEHICLE, 'READ'), sp(VEHICLE, 'WRITE')] },
      { key: 'R', servicePolicies: [sp(VEHICLE, 'DELETE')] },
      { key: 'R' },
    ]));
    for (const p of ['READ', 'WRITE', 'DELETE']) expect(decide([ar(['R'], ['VIN=1'])], c('VIN=1'), VEHICLE, p, policy).granted).toBe(true);
    expect(decide([ar(['R'], ['VIN=1'])], c('VIN=1'), VEHICLE, 'ADMIN', policy).granted).toBe(false);
  });

  test('keeps applicationId and changeId, and does not use serviceDefinitionSource to match', () => {
    const policy = compilePolicy({ applicationId: 'app-9', changeId: 'c7', roles: [{ key: 'R', servicePolicies: [{ serviceDefinitionSource: 'OTHER', serviceDefinitionKey: VEHICLE, permissions: [{ key: 'READ' }] }] }] });
    expect(policy.applicationId).toBe('app-9');
    expect(policy.changeId).toBe('c7');
    expect(decide([ar(['R'], ['VIN=1'])], c('VIN=1'), VEHICLE, 'READ', policy).granted).toBe(true);
  });

  test('a service policy of one role never leaks into another role', () => {
    const policy = compilePolicy(policyOf([{ key: 'A', servicePolicies: [sp(VEHICLE, 'WRITE')] }, { key: 'B', servicePolicies: [sp(VEHICLE, 'READ')] }]));
    expect(decide([ar(['B'], ['VIN=1'])], c('VIN=1'), VEHICLE, 'WRITE', policy).reason).toBe('PERMISSION_NOT_GRANTED');
  });
});
