/**
 * The permission check of spec §7, steps 2–7, as a pure function: no I/O, no clock. Roles come only
 * from the access references that name the resource; a role grants when the compiled policy lists
 * the permission for the service.
 */
import type { AccessReference } from '../types.js';
import type { CompiledPolicy } from '../policy/types.js';

/** Why a decision came out as it did. Stable strings. */
export type DecisionReason =
  | 'GRANTED'
  /** The resource reference was empty or not a string. */
  | 'INVALID_RESOURCE'
  /** No access reference in the token names this resource. */
  | 'NO_MATCHING_REFERENCE'
  /** The token's roles for this resource are not in the application's policy. */
  | 'ROLE_NOT_IN_POLICY'
  /** The roles exist, but none has a service policy for this service. */
  | 'NO_SERVICE_POLICY'
  /** Service policies exist, but none lists the permission. */
  | 'PERMISSION_NOT_GRANTED';

/** The outcome of one permission check. A denial is a normal result, not an error. */
export interface Decision {
  /** Whether the permission is granted. */
  readonly granted: boolean;
  /** The resource reference checked: `TYPE=value`, or the node id. */
  readonly reference: string;
  /** Role keys the token holds for this reference. */
  readonly roles: readonly string[];
  /** The first role found that grants the permission. */
  readonly grantedBy?: {
    /** The role key. */
    readonly role: string;
    /** The service definition key. */
    readonly service: string;
    /** The permission key. */
    readonly permission: string;
  };
  /** `changeId` of the policy the decision was made with; `undefined` when none was needed (no roles for the resource). */
  readonly changeId: string | undefined;
  /** Which step decided; see {@link DecisionReason}. */
  readonly reason: DecisionReason;
}

/** A resource reference, resolved: which `ars` field to match (`c` or `n`) and the exact string. */
export interface ResourceRef {
  readonly field: 'c' | 'n';
  readonly reference: string;
}

/** The whole check (steps 4–7) for one resource, given the policy. */
export function decide(
  ars: readonly AccessReference[],
  resource: ResourceRef,
  service: string,
  permission: string,
  policy: CompiledPolicy,
): Decision {
  const roles = collectRoles(ars, resource);
  if (roles.length === 0) return noMatchingReference(resource.reference, policy.changeId);
  return decideForRoles(roles, resource.reference, service, permission, policy);
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
