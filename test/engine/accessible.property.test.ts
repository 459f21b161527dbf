/**
 * Property: `accessibleValues` (one pass over `ars`) agrees with the per-resource check for every
 * value — a value is listed exactly when `collectRoles` + `decideForRoles` grant it — and its
 * `roles` are exactly the token's roles for that value that grant; `permissionsOf` agrees with the
 * per-permission check too. Over the same small alphabets as the spec transcription, so that
 * prototype-member names, `=` inside values and Unicode look-alikes show up.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { accessibleValues } from '../../src/engine/accessible.js';
import { compilePolicy } from '../../src/engine/compile-policy.js';
import { collectRoles, decideForRoles } from '../../src/engine/decide.js';
import { permissionsOf } from '../../src/engine/permissions.js';
import { accessReference, permission, rolePolicy, service } from './spec-transcription.js';

const candidates = (ars: readonly { c: readonly string[]; n: readonly string[] }[], field: 'c' | 'n') =>
  new Set([...ars.flatMap((a) => a[field]), 'VIN=1', 'VIN=zz', 'node-1', 'node-x']);

describe('accessible agrees with authorize', () => {
  test('custom references of a type, and node ids', () => {
    let listed = 0;
    fc.assert(
      fc.property(fc.array(accessReference, { maxLength: 6 }), rolePolicy, service, permission, fc.constantFrom('VIN', 'vin', '__proto__'), fc.boolean(), (ars, raw, svc, perm, type, byNode) => {
        const policy = compilePolicy(raw);
        const field = byNode ? 'n' : 'c';
        const prefix = byNode ? undefined : `${type}=`;
        const found = accessibleValues(ars, { field, prefix }, svc, perm, policy);
        for (const reference of candidates(ars, field)) {
          if (prefix !== undefined && (!reference.startsWith(prefix) || reference.length === prefix.length)) continue;
          if (prefix === undefined && reference.length === 0) continue;
          const value = prefix === undefined ? reference : reference.slice(prefix.length);
          const roles = collectRoles(ars, { field, reference });
          const decision = roles.length > 0 ? decideForRoles(roles, reference, svc, perm, policy) : undefined;
          const granting = roles.filter((r) => policy.roles.get(r)?.get(svc)?.has(perm) === true);
          expect(found.has(value), reference).toBe(decision?.granted === true);
          if (found.has(value)) {
            listed++;
            expect([...(found.get(value) as string[])].sort()).toStrictEqual([...granting].sort());
          }
        }
        for (const value of found.keys()) expect(collectRoles(ars, { field, reference: prefix === undefined ? value : prefix + value }).length).toBeGreaterThan(0);
      }),
      { numRuns: 600 },
    );
    expect(listed).toBeGreaterThan(20); // the generators do produce grants
  });

  test('permissionsOf lists exactly the permissions authorize grants, with their granting roles', () => {
    fc.assert(
      fc.property(fc.array(accessReference, { maxLength: 6 }), rolePolicy, service, (ars, raw, svc) => {
        const policy = compilePolicy(raw);
        const roles = collectRoles(ars, { field: 'c', reference: 'VIN=1' });
        const held = permissionsOf(roles, svc, policy);
        const keys = held.map((h) => h.permission);
        expect(keys).toStrictEqual([...keys].sort());
        for (const perm of new Set([...keys, 'READ', 'WRITE', '__proto__'])) {
          const granted = roles.length > 0 && decideForRoles(roles, 'VIN=1', svc, perm, policy).granted;
          expect(keys.includes(perm), perm).toBe(granted);
        }
        for (const { permission: perm, roles: by } of held) {
          expect(by.every((r) => policy.roles.get(r)?.get(svc)?.has(perm) === true)).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
  });
});
