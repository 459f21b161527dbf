/**
 * The role policy document the development IAM serves at its policy API (spec §2.3; docs/protocol.md
 * of iam-authz): what `policyOf(application)` returns. The library reads this document; it is
 * written here, where a policy is made.
 */

/** A permission a service policy grants. */
export interface PermissionRef {
  /** Permission key, e.g. `READ`. */
  readonly key: string;
}

/** The permissions a role grants in one service. */
export interface ServicePolicy {
  /** Where the service is defined, e.g. `APPLICATION`; iam-authz does not use it for decisions. */
  readonly serviceDefinitionSource?: string;
  /** Service key, e.g. `vehicle-service`. */
  readonly serviceDefinitionKey: string;
  /** The granted permissions. */
  readonly permissions: readonly PermissionRef[];
}

/** A role of the application and what it grants. */
export interface Role {
  /** Role key, as in the token's `ars[].r`. */
  readonly key: string;
  /** Per service; absent means none. */
  readonly servicePolicies?: readonly ServicePolicy[];
}

/** The policy API's answer for one application. */
export interface RolePolicy {
  /** The application the policy belongs to (the tokens' `app`). */
  readonly applicationId: string;
  /** Version of the policy; a new value means cached copies are out of date. */
  readonly changeId: string;
  /** The application's roles. */
  readonly roles: readonly Role[];
}
