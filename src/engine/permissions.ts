/**
 * "Which permissions do I hold on this resource?" — the one call a UI needs to show or hide
 * actions: the roles the token holds for the reference (spec §7 step 4), and for each permission
 * of the service the roles that grant it. O(roles × their permissions in the service).
 */
import type { CompiledPolicy } from './compile-policy.js';
import type { HeldPermission } from '../types.js';

/** Permissions `roles` grant in `service`, sorted by key, each with its granting roles. */
export function permissionsOf(roles: readonly string[], service: string, policy: CompiledPolicy): HeldPermission[] {
  const byPermission = new Map<string, string[]>();
  for (const role of roles) {
    const permissions = policy.roles.get(role)?.get(service);
    if (!permissions) continue;
    for (const permission of permissions) {
      const granting = byPermission.get(permission);
      if (granting) granting.push(role);
      else byPermission.set(permission, [role]);
    }
  }
  return [...byPermission.keys()].sort().map((permission) => ({ permission, roles: byPermission.get(permission) as string[] }));
}
