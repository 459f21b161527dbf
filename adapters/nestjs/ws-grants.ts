/**
 * What a granted gateway message leaves under watch: per resource, the query that was granted,
 * keyed so that a socket's watch can tell a grant it already holds from a new one.
 */
import type { AuthorizeQuery, Authorizer, IamAuthzError, IamState } from '../../src/index.js';

/**
 * The most grants one socket keeps under watch; past it the oldest leave the watch (a message for
 * them is still checked by the guard, as every message is).
 */
const MAX_GRANTS = 64;

/** What of a `@RequirePermission` requirement names the grants. */
export interface Asked {
  readonly service: string;
  /** The resource type, or `undefined` for node ids. */
  readonly type: string | undefined;
  readonly permissions: readonly string[];
}

/**
 * The queries `state` was granted, keyed: per resource, the permission that granted it (with
 * `@RequireAnyPermission`, the one found; losing it ends the watch even if another would grant).
 */
export function grantsOf(asked: Asked, state: IamState): Map<string, AuthorizeQuery> {
  const grants = new Map<string, AuthorizeQuery>();
  const decisions = state.decisions ?? (state.decision === undefined ? [] : [state.decision]);
  const { service, type, permissions } = asked;
  for (const decision of decisions) {
    if (!decision.granted) continue;
    const permission = decision.grantedBy?.permission ?? (permissions.length === 1 ? permissions[0] : undefined);
    if (permission === undefined) continue;
    const { reference } = decision;
    const resource = type === undefined ? { node: reference } : { type, value: reference.startsWith(`${type}=`) ? reference.slice(type.length + 1) : reference };
    grants.set(`${service}\u0000${permission}\u0000${reference}`, { service, permission, resource });
  }
  return grants;
}

/** `held` and then `added` (the latest last), at most {@link MAX_GRANTS}: the oldest leave first. */
export function merged(held: ReadonlyMap<string, AuthorizeQuery>, added: ReadonlyMap<string, AuthorizeQuery>): Map<string, AuthorizeQuery> {
  const all = new Map(held);
  for (const [key, query] of added) {
    all.delete(key);
    all.set(key, query);
  }
  for (const key of all.keys()) {
    if (all.size <= MAX_GRANTS) break;
    all.delete(key);
  }
  return all;
}

/** What of socket.io's server-side `Socket` is used. */
export interface SocketLike {
  readonly connected?: boolean;
  emit(event: string, body: unknown): unknown;
  disconnect(close?: boolean): unknown;
  once(event: 'disconnect', listener: () => void): unknown;
}

/** The module's authorizer, and the problem body of an error as its guards render it. */
export interface SocketWatchContext {
  readonly authorizer: Authorizer;
  readonly problem: (error: IamAuthzError) => object;
}
