/** The whole check (spec §7 steps 4–7) for one resource, as the authorizer composes it: for the engine tests. */
import { collectRoles, decideForRoles, noMatchingReference, type ResourceRef } from '../../src/engine/decide.js';
import type { CompiledPolicy } from '../../src/engine/compile-policy.js';
import type { AccessReference, Decision } from '../../src/types.js';

export function decide(ars: readonly AccessReference[], resource: ResourceRef, service: string, permission: string, policy: CompiledPolicy): Decision {
  const roles = collectRoles(ars, resource);
  if (roles.length === 0) return noMatchingReference(resource.reference, policy.changeId);
  return decideForRoles(roles, resource.reference, service, permission, policy);
}
