/** The role policy (spec §2.3) as received, and as compiled for fast lookups. */

export interface PermissionRef {
  readonly key: string;
}

export interface ServicePolicy {
  readonly serviceDefinitionSource?: string;
  readonly serviceDefinitionKey: string;
  readonly permissions: readonly PermissionRef[];
}

export interface Role {
  readonly key: string;
  readonly servicePolicies?: readonly ServicePolicy[];
}

/** Response of the policy API (spec §2.3). */
export interface RolePolicy {
  readonly applicationId: string;
  readonly changeId: string;
  readonly roles: readonly Role[];
}

/** role key → service key → granted permission keys. */
export type RoleIndex = ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;

/** A policy compiled for O(1) lookups per role. */
export interface CompiledPolicy {
  readonly applicationId: string;
  readonly changeId: string;
  readonly roles: RoleIndex;
}
