/**
 * The permission check of spec §7, steps 2–7, as a pure function: no I/O, no clock. Roles come only
 * from the access references that name the resource; a role grants when the compiled policy lists
 * the permission for the service.
 */
import type { AccessReference, Decision } from '../types.js';
import type { CompiledPolicy } from './compile-policy.js';

/** A resource reference, resolved: which `ars` field to match (`c` or `n`) and the exact string. */
export interface ResourceRef {
  readonly field: 'c' | 'n';
  readonly reference: string;
}

/** Denial for a resource the token names nowhere: no policy can change it. */
export function noMatchingReference(reference: string, changeId: string | undefined): Decision {
  return { granted: false, reference, roles: [], changeId, reason: 'NO_MATCHING_REFERENCE' };
}

/** Steps 6–7: do any of `roles` (non-empty) grant `permission` on `service` under `policy`? */
export function decideForRoles(
  roles: readonly string[],
  reference: string,
  service: string,
  permission: string,
  policy: CompiledPolicy,
): Decision {
  const { changeId } = policy;
  let roleInPolicy = false;
  let servicePolicy = false;
  for (const role of roles) {
    const services = policy.roles.get(role);
    if (!services) continue;
    roleInPolicy = true;
    const permissions = services.get(service);
    if (!permissions) continue;
    servicePolicy = true;
    if (permissions.has(permission)) {
      return { granted: true, reference, roles, grantedBy: { role, service, permission }, changeId, reason: 'GRANTED' };
    }
  }
  const reason = !roleInPolicy ? 'ROLE_NOT_IN_POLICY' : !servicePolicy ? 'NO_SERVICE_POLICY' : 'PERMISSION_NOT_GRANTED';
  return { granted: false, reference, roles, changeId, reason };
}

/** Step 4: role keys of every access reference whose `c` (or `n`) list contains the reference, without duplicates. */
export function collectRoles(ars: readonly AccessReference[], resource: ResourceRef): string[] {
  const { field, reference } = resource;
  const roles: string[] = [];
  let seen: Set<string> | undefined;
  for (const entry of ars) {
    if (!entry[field].includes(reference)) continue;
    for (const role of entry.r) {
      // Small lists (the usual case) dedupe by scan; large ones switch to a Set to stay linear.
      if (roles.length < 16) {
        if (!roles.includes(role)) roles.push(role);
        continue;
      }
      seen ??= new Set(roles);
      if (!seen.has(role)) {
        seen.add(role);
        roles.push(role);
      }
    }
  }
  return roles;
}
