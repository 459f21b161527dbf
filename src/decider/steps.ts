/**
 * The decision steps: how each entry point reads a policy — `ONE` for `authorize`, `MANY` for
 * `authorizeMany`, `LIST` for `accessible`, `HELD` for `permissionsFor` — and whether its answer
 * denies something a fresher policy might grant (which earns one refetch).
 */
import { accessibleValues, type AccessibleMap, type AccessibleSelector } from '../engine/accessible.js';
import type { CompiledPolicy } from '../engine/compile-policy.js';
import { decideForRoles, noMatchingReference, type ResourceRef } from '../engine/decide.js';
import { permissionsOf } from '../engine/permissions.js';
import type { Caller, Decision, HeldPermission } from '../types.js';
import { invalidResource } from './denials.js';
import type { AuthorizeQuery } from './queries.js';

/** How one entry point reads a policy: its evaluation, and whether the result denies something. */
export interface DecisionStep<A, T> {
  /** The answer under `policy`; `previous` is the answer under the policy before a refetch. */
  evaluate(args: A, policy: CompiledPolicy | undefined, previous: T | undefined): T;
  /** Whether `result` denies something that a fresher policy might grant. */
  denies(args: A, result: T): boolean;
}

interface OneQuery { roles: string[]; reference: string; service: string; permission: string }
export interface Prepared { query: AuthorizeQuery; resource: ResourceRef | undefined; roles: string[] }
interface ListQuery { ars: Caller['claims']['ars']; selector: AccessibleSelector; service: string; permission: string; named: number }

export const ONE: DecisionStep<OneQuery, Decision> = {
  evaluate: (q, policy) => decideForRoles(q.roles, q.reference, q.service, q.permission, policy as CompiledPolicy),
  denies: (_q, decision) => !decision.granted,
};

export const MANY: DecisionStep<Prepared[], Decision[]> = {
  evaluate: (prepared, policy, previous) => prepared.map(({ query, resource, roles }, i) => {
    // After a refetch, a grant stands and a query without roles needs no second look.
    if (previous?.[i]?.granted === true || (previous && roles.length === 0)) return previous[i] as Decision;
    if (!resource) return invalidResource(query);
    if (roles.length === 0 || !policy) return noMatchingReference(resource.reference, undefined);
    return decideForRoles(roles, resource.reference, query.service, query.permission, policy);
  }),
  denies: (prepared, decisions) => decisions.some((d, i) => !d.granted && (prepared[i] as Prepared).roles.length > 0),
};

export const LIST: DecisionStep<ListQuery, AccessibleMap> = {
  evaluate: (q, policy) => accessibleValues(q.ars, q.selector, q.service, q.permission, policy as CompiledPolicy),
  // A value the token holds roles on that is not listed is a denial, as `authorize` would see it.
  denies: (q, found) => found.size < q.named,
};

export const HELD: DecisionStep<{ roles: string[]; service: string }, HeldPermission[]> = {
  evaluate: (q, policy) => permissionsOf(q.roles, q.service, policy as CompiledPolicy),
  // Which permissions the service has is not known here: any answer may lack a new grant.
  denies: () => true,
};

/** How many distinct values of the selected kind the token holds at least one role on. */
export function namedWithRoles(ars: Caller['claims']['ars'], selector: AccessibleSelector): number {
  const { field, prefix } = selector;
  const values = new Set<string>();
  for (const entry of ars) {
    if (entry.r.length === 0) continue;
    for (const ref of entry[field]) {
      if (prefix === undefined ? ref.length > 0 : ref.length > prefix.length && ref.startsWith(prefix)) values.add(ref);
    }
  }
  return values.size;
}
