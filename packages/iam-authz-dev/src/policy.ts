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

/**
 * The first mistake of `value` as a role policy document (`roles[2].key is missing`), or
 * `undefined` when it is one. The rules are the library's (it refuses a whole document for one
 * malformed field, so that a half-understood policy never grants), repeated here because the
 * development kit reaches the library by its public names only.
 */
export function rolePolicyMistake(value: unknown): string | undefined {
  if (!isObject(value)) return 'it is not a JSON object';
  if (!nonEmptyString(value.applicationId)) return 'applicationId is missing';
  if (!nonEmptyString(value.changeId)) return 'changeId is missing';
  if (!Array.isArray(value.roles)) return 'roles is not an array';
  const roles = value.roles as unknown[];
  for (let i = 0; i < roles.length; i++) {
    const role = roles[i];
    if (!isObject(role) || !nonEmptyString(role.key)) return `roles[${i}].key is missing`;
    const servicePolicies = role.servicePolicies;
    if (servicePolicies === undefined || servicePolicies === null) continue;
    if (!Array.isArray(servicePolicies)) return `roles[${i}].servicePolicies is not an array`;
    for (let j = 0; j < servicePolicies.length; j++) {
      const sp: unknown = servicePolicies[j];
      const at = `roles[${i}].servicePolicies[${j}]`;
      if (!isObject(sp) || !nonEmptyString(sp.serviceDefinitionKey)) return `${at}.serviceDefinitionKey is missing`;
      if (sp.serviceDefinitionSource !== undefined && typeof sp.serviceDefinitionSource !== 'string') return `${at}.serviceDefinitionSource is not a string`;
      if (!Array.isArray(sp.permissions)) return `${at}.permissions is not an array`;
      const permissions = sp.permissions as unknown[];
      for (let k = 0; k < permissions.length; k++) {
        const p = permissions[k];
        if (!isObject(p) || !nonEmptyString(p.key)) return `${at}.permissions[${k}].key is missing`;
      }
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
