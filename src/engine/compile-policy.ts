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
  for (const role of policy.roles) {
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
  return { applicationId: policy.applicationId, changeId: policy.changeId, roles };
}
