/**
 * Shape check of a role policy document (spec §2.3). Anything malformed rejects the whole
 * document: a half-understood policy must never be the basis of a grant.
 */
import type { RolePolicy } from '../types.js';

/**
 * Roles, service policies and permissions checked between two turns of the event loop by
 * {@link policyMistakeSliced} (≈ 1–3 ms of work).
 */
export const CHECKS_PER_TURN = 50_000;

/** Returns the document's first mistake (what is malformed), or `undefined` when it is a valid {@link RolePolicy}. */
export function policyMistake(value: unknown): string | undefined {
  const steps = mistakes(value);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/**
 * {@link policyMistake}, handing the event loop back every {@link CHECKS_PER_TURN} items checked:
 * one role may hold most of a 16 MiB policy, so the work is counted in permissions, not roles.
 */
export async function policyMistakeSliced(value: unknown, yieldTurn: () => Promise<void>): Promise<string | undefined> {
  const steps = mistakes(value);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    await yieldTurn();
  }
}

/** The check; yields after every {@link CHECKS_PER_TURN} items, returns the mistake found. */
function* mistakes(value: unknown): Generator<void, string | undefined> {
  if (!isObject(value)) return 'policy is not a JSON object';
  if (!nonEmptyString(value.applicationId)) return 'applicationId is missing';
  if (!nonEmptyString(value.changeId)) return 'changeId is missing';
  const roles = value.roles;
  if (!Array.isArray(roles)) return 'roles is not an array';
  let work = 0;
  // Indexed loops, and the path of a field is spelled only when it is wrong: nothing is allocated
  // per role or permission.
  for (let i = 0; i < roles.length; i++) {
    if (++work >= CHECKS_PER_TURN) { work = 0; yield; }
    const role: unknown = roles[i];
    if (!isObject(role) || !nonEmptyString(role.key)) return `roles[${i}].key is missing`;
    const servicePolicies = role.servicePolicies;
    if (servicePolicies === undefined || servicePolicies === null) continue;
    if (!Array.isArray(servicePolicies)) return `roles[${i}].servicePolicies is not an array`;
    for (let j = 0; j < servicePolicies.length; j++) {
      if (++work >= CHECKS_PER_TURN) { work = 0; yield; }
      const sp: unknown = servicePolicies[j];
      if (!isObject(sp) || !nonEmptyString(sp.serviceDefinitionKey)) return `roles[${i}].servicePolicies[${j}].serviceDefinitionKey is missing`;
      if (sp.serviceDefinitionSource !== undefined && typeof sp.serviceDefinitionSource !== 'string') {
        return `roles[${i}].servicePolicies[${j}].serviceDefinitionSource is not a string`;
      }
      const permissions = sp.permissions;
      if (!Array.isArray(permissions)) return `roles[${i}].servicePolicies[${j}].permissions is not an array`;
      for (let k = 0; k < permissions.length; k++) {
        if (++work >= CHECKS_PER_TURN) { work = 0; yield; }
        const p: unknown = permissions[k];
        if (!isObject(p) || !nonEmptyString(p.key)) return `roles[${i}].servicePolicies[${j}].permissions[${k}].key is missing`;
      }
    }
  }
  return undefined;
}

export function isRolePolicy(value: unknown): value is RolePolicy {
  return policyMistake(value) === undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
