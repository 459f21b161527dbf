/**
 * What the decider is asked — `authorize`'s, `accessible`'s and `permissionsFor`'s queries — and
 * the checks of a caller and a query: a misuse is a `TypeError` that names the entry point, never
 * a denial.
 */
import type { AccessibleSelector } from '../engine/accessible.js';
import type { ResourceQuery } from '../engine/resource.js';

/** What `authorize` is asked: may the caller hold `permission` of `service` on `resource`? */
export interface AuthorizeQuery {
  /** The consuming service's key (`serviceDefinitionKey` in the policy), e.g. `vehicle-service`. */
  readonly service: string;
  /** The permission key, e.g. `WRITE`. */
  readonly permission: string;
  /** `{ type, value }` for a custom reference `TYPE=value`, or `{ node }` for a node id. */
  readonly resource: ResourceQuery;
  /** Only labels the decision event: a denial under `'report'` is logged with `shadow: true`. `authorize` never enforces. Default `'enforce'`. */
  readonly mode?: 'enforce' | 'report' | undefined;
}

/** What `accessible` is asked: on which resources of a kind may the caller hold `permission` of `service`? */
export interface AccessibleQuery {
  /** The consuming service's key, e.g. `vehicle-service`. */
  readonly service: string;
  /** The permission key, e.g. `READ`. */
  readonly permission: string;
  /** List the values of custom references of this type (`VIN` → the `x` of every `VIN=x`). Give this or `node`. */
  readonly type?: string;
  /** `true`: list node ids (`ars[].n`) instead. */
  readonly node?: boolean;
  /** Return `{ value, roles }` (the granting roles per value) instead of bare values. Default `false`. */
  readonly explain?: boolean;
}

/** What `permissionsFor` is asked: which permissions of `service` does the caller hold on `resource`? */
export interface PermissionsQuery {
  /** The consuming service's key. */
  readonly service: string;
  /** `{ type, value }` or `{ node }`, as in {@link AuthorizeQuery}. */
  readonly resource: ResourceQuery;
}

/** A token string (or anything but an identity) where the identity belongs: say what to pass, never echo it. */
export function checkCaller(where: string, identity: unknown): void {
  const claims = typeof identity === 'object' && identity !== null ? (identity as { claims?: unknown }).claims : undefined;
  if (typeof claims === 'object' && claims !== null) return;
  throw new TypeError(`${where}: pass the identity that authenticate() returned${typeof identity === 'string' ? ', not a token string' : ''}`);
}

/** A query's service and permission are a programming matter: a `TypeError`, not a denial. */
export function checkQuery(where: string, query: { service?: unknown; permission?: unknown; mode?: unknown } | null | undefined): void {
  if (typeof query !== 'object' || query === null) throw new TypeError(`${where}: expects { service, permission, … }`);
  if (typeof query.service !== 'string' || query.service.length === 0) throw new TypeError(`${where}: "service" must be a non-empty string`);
  if (typeof query.permission !== 'string' || query.permission.length === 0) throw new TypeError(`${where}: "permission" must be a non-empty string`);
  const { mode } = query;
  if (mode !== undefined && mode !== 'enforce' && mode !== 'report') throw new TypeError(`${where}: "mode" must be 'enforce' or 'report' (or left out)`);
}

/** What `accessible` lists: node ids, or the values of one reference type; a `TypeError` for neither or both. */
export function selectorOf(query: AccessibleQuery): AccessibleSelector {
  if (query.node !== undefined && typeof query.node !== 'boolean') throw new TypeError('accessible: "node" must be a boolean');
  if (query.node && query.type === undefined) return { field: 'n', prefix: undefined };
  const { type } = query;
  if (query.node) throw new TypeError('accessible: give either "type" or "node: true"');
  if (typeof type !== 'string' || type.length === 0 || type.includes('=')) {
    throw new TypeError('accessible: "type" must be a reference type (a non-empty string without "="), or give "node: true"');
  }
  return { field: 'c', prefix: `${type}=` };
}
