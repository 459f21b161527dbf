/** The role policy (spec §2.3) as received, and as compiled for fast lookups. */

/** A permission a service policy grants. */
export interface PermissionRef {
  /** Permission key, e.g. `READ`. */
  readonly key: string;
}

/** The permissions a role grants in one service. */
export interface ServicePolicy {
  /** Where the service is defined, e.g. `APPLICATION`; not used for decisions. */
  readonly serviceDefinitionSource?: string;
  /** Service key, e.g. `vehicle-service`. */
  readonly serviceDefinitionKey: string;
  /** The granted permissions. */
  readonly permissions: readonly PermissionRef[];
}

/** A role of the application and what it grants. */
export interface Role {
  /** Role key, as in `ars[].r`. */
  readonly key: string;
  /** Per service; absent means none. */
  readonly servicePolicies?: readonly ServicePolicy[];
}

/** Response of the policy API (spec §2.3). */
export interface RolePolicy {
  /** The application the policy belongs to (the token's `app`). */
  readonly applicationId: string;
  /** Version of the policy; a new value means cached copies are out of date. */
  readonly changeId: string;
  /** The application's roles. */
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
