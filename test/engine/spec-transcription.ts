/**
 * A plain, independent transcription of spec §7's permission check (steps 4–7), written over the
 * raw role policy with arrays and `===` only, and fast-check generators over small alphabets (so
 * that references, roles, services and permissions match often and prototype-member names show up).
 * Shared by the property tests of `decide()` and of `authorize()`.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { Decision, DecisionReason } from '../../src/types.js';
import type { Role, RolePolicy, ServicePolicy } from '../../src/types.js';
import type { AccessReference } from '../../src/types.js';

const FEW_ROLES = ['DRIVER', 'OWNER', 'driver', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 'R '];
const MANY_ROLES = Array.from({ length: 30 }, (_, i) => `R${i}`);
const SERVICES = ['vehicle-service', 'Vehicle-Service', 'constructor', '__proto__', 'other'];
const PERMISSIONS = ['READ', 'WRITE', 'read', '__proto__', 'hasOwnProperty', 'valueOf'];
const REFERENCES = ['VIN=1', 'VIN=2', 'vin=1', 'VIN=1 ', 'VIN=a=b', 'VIN=Ger\u00e4t', 'VIN=Gera\u0308t', '__proto__', 'node-1', 'node-2'];

/** Mostly the common value, so that matches happen often; otherwise any of the alphabet. */
function biased(common: string, rest: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof({ weight: 3, arbitrary: fc.constant(common) }, { weight: 2, arbitrary: fc.constantFrom(...rest) });
}

const role = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('DRIVER', 'OWNER') },
  { weight: 3, arbitrary: fc.constantFrom(...FEW_ROLES) },
  { weight: 1, arbitrary: fc.constantFrom(...MANY_ROLES) },
);
export const service = biased('vehicle-service', SERVICES);
export const permission = biased('READ', PERMISSIONS);
export const reference = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('VIN=1', 'node-1') },
  { weight: 2, arbitrary: fc.constantFrom(...REFERENCES) },
);

export const accessReference: fc.Arbitrary<AccessReference> = fc.record({
  r: fc.array(role, { maxLength: 12 }),
  c: fc.array(reference, { maxLength: 3 }),
  n: fc.array(reference, { maxLength: 3 }),
});

const servicePolicy: fc.Arbitrary<ServicePolicy> = fc.record({
  serviceDefinitionSource: fc.constant('APPLICATION'),
  serviceDefinitionKey: service,
  permissions: fc.array(permission.map((key) => ({ key })), { maxLength: 3 }),
});

const policyRole: fc.Arbitrary<Role> = fc.oneof(
  fc.record({ key: role }),
  fc.record({ key: role, servicePolicies: fc.array(servicePolicy, { maxLength: 3 }) }),
);

export const rolePolicy: fc.Arbitrary<RolePolicy> = fc.record({
  applicationId: fc.constant('app-1'),
  changeId: fc.constantFrom('c1', 'c2'),
  roles: fc.array(policyRole, { maxLength: 8 }),
});

export interface Expected {
  granted: boolean;
  reason: DecisionReason;
  roles: string[];
  /** Roles (in token order) that grant the permission. */
  granting: string[];
}

/** Spec §7, steps 4–7, transcribed literally over the raw policy: arrays and `===` only. */
export function transcription(ars: readonly AccessReference[], field: 'c' | 'n', ref: string, svc: string, perm: string, policy: RolePolicy): Expected {
  // Step 4: role keys of every access reference whose list contains the reference.
  const collected: string[] = [];
  for (const entry of ars) {
    if (entry[field].some((x) => x === ref)) {
      for (const r of entry.r) if (!collected.some((x) => x === r)) collected.push(r);
    }
  }
  if (collected.length === 0) return { granted: false, reason: 'NO_MATCHING_REFERENCE', roles: [], granting: [] };
  // Step 6: policy roles whose key was collected; their service policies for this service.
  const kept = policy.roles.filter((pr) => collected.some((x) => x === pr.key));
  if (kept.length === 0) return { granted: false, reason: 'ROLE_NOT_IN_POLICY', roles: collected, granting: [] };
  const forService = (pr: Role): ServicePolicy[] => (pr.servicePolicies ?? []).filter((s) => s.serviceDefinitionKey === svc);
  const remaining = kept.flatMap(forService);
  if (remaining.length === 0) return { granted: false, reason: 'NO_SERVICE_POLICY', roles: collected, granting: [] };
  // Step 7: granted iff a remaining service policy lists the permission.
  const granted = remaining.some((s) => s.permissions.some((p) => p.key === perm));
  const granting = collected.filter((r) => policy.roles.some((pr) => pr.key === r && forService(pr).some((s) => s.permissions.some((p) => p.key === perm))));
  return { granted, reason: granted ? 'GRANTED' : 'PERMISSION_NOT_GRANTED', roles: collected, granting };
}

export function checkDecision(d: Decision, e: Expected, ref: string, svc: string, perm: string, changeId: string | undefined): void {
  expect(d.granted).toBe(e.granted);
  expect(d.reason).toBe(e.reason);
  expect([...d.roles]).toEqual(e.roles);
  expect(d.reference).toBe(ref);
  expect(d.changeId).toBe(changeId);
  if (e.granted) {
    // The first role, in token order, that grants.
    expect(d.grantedBy).toEqual({ role: e.granting[0], service: svc, permission: perm });
  } else {
    expect(d.grantedBy).toBeUndefined();
  }
}

