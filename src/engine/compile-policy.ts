/**
 * Compiles a role policy into role → service → permission-set lookups, so that a decision costs
 * O(roles matched) instead of a scan of the whole policy. Maps and Sets only: names such as
 * `__proto__` or `constructor` are plain keys, never prototype members.
 */
import type { RolePolicy } from '../types.js';

/** role key → service key → granted permission keys. */
export type RoleIndex = ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;

/** A policy compiled for O(1) lookups per role. */
export interface CompiledPolicy {
  readonly applicationId: string;
  readonly changeId: string;
  readonly roles: RoleIndex;
}

export function compilePolicy(policy: RolePolicy): CompiledPolicy {
  const roles = new Map<string, Map<string, Set<string>>>();
  addRoles(roles, policy, 0, policy.roles.length);
  return { applicationId: policy.applicationId, changeId: policy.changeId, roles };
}

/** Roles compiled between two turns of the event loop by {@link compilePolicyYielding}. */
export const ROLES_PER_TURN = 1000;

/**
 * The same compile, handing the event loop back every {@link ROLES_PER_TURN} roles: a
 * 10,000-role policy takes 5–10 ms to compile, and requests of other applications (which have
 * their policy) should not wait behind it.
 */
export async function compilePolicyYielding(policy: RolePolicy): Promise<CompiledPolicy> {
  const roles = new Map<string, Map<string, Set<string>>>();
  for (let start = 0; start < policy.roles.length; start += ROLES_PER_TURN) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    addRoles(roles, policy, start, Math.min(policy.roles.length, start + ROLES_PER_TURN));
  }
  return { applicationId: policy.applicationId, changeId: policy.changeId, roles };
}

function addRoles(roles: Map<string, Map<string, Set<string>>>, policy: RolePolicy, from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const role = policy.roles[i] as RolePolicy['roles'][number];
    let services = roles.get(role.key);
    if (!services) {
      services = new Map();
      roles.set(role.key, services);
    }
    for (const sp of role.servicePolicies ?? []) {
      let permissions = services.get(sp.serviceDefinitionKey);
      if (!permissions) {
        permissions = new Set();
        services.set(sp.serviceDefinitionKey, permissions);
      }
      for (const permission of sp.permissions) permissions.add(permission.key);
    }
  }
}
