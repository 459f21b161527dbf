/**
 * Shape check of a role policy document (spec §2.3). Anything malformed rejects the whole
 * document: a half-understood policy must never be the basis of a grant.
 */
import type { RolePolicy } from './types.js';

/** Returns the reason the document is malformed, or `undefined` when it is a valid {@link RolePolicy}. */
export function policyProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'policy is not a JSON object';
  if (!nonEmptyString(value.applicationId)) return 'applicationId is missing';
  if (!nonEmptyString(value.changeId)) return 'changeId is missing';
  if (!Array.isArray(value.roles)) return 'roles is not an array';
  for (const [i, role] of (value.roles as unknown[]).entries()) {
    if (!isObject(role) || !nonEmptyString(role.key)) return `roles[${i}].key is missing`;
    if (role.servicePolicies === undefined || role.servicePolicies === null) continue;
    if (!Array.isArray(role.servicePolicies)) return `roles[${i}].servicePolicies is not an array`;
    for (const [j, sp] of (role.servicePolicies as unknown[]).entries()) {
      const at = `roles[${i}].servicePolicies[${j}]`;
      if (!isObject(sp) || !nonEmptyString(sp.serviceDefinitionKey)) return `${at}.serviceDefinitionKey is missing`;
      if (sp.serviceDefinitionSource !== undefined && typeof sp.serviceDefinitionSource !== 'string') {
        return `${at}.serviceDefinitionSource is not a string`;
      }
      if (!Array.isArray(sp.permissions)) return `${at}.permissions is not an array`;
      for (const [k, p] of (sp.permissions as unknown[]).entries()) {
        if (!isObject(p) || !nonEmptyString(p.key)) return `${at}.permissions[${k}].key is missing`;
      }
    }
  }
  return undefined;
}

export function isRolePolicy(value: unknown): value is RolePolicy {
  return policyProblem(value) === undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
