/**
 * The permission guard: authenticate the caller, resolve the resource(s) from the request, decide,
 * and resolve with the state to attach — or reject with a 401/403/503 `IamAuthzError`, or with
 * whatever the resource resolver threw (the application's bug, a 500).
 */
import type { AuthorizeQuery, Authorizer } from '../authorizer.js';
import { PermissionDeniedError } from '../errors.js';
import type { Inventory, InventoryRoute } from '../inventory.js';
import { settled, settledValue } from '../lib/settled.js';
import type { Decision, GuardMode, IamState, Identity } from '../types.js';
import type { Guard } from './guard-types.js';
import type { PermissionArgs } from './permission-args.js';
import { markGuard, permissionMark } from './audit/guard-mark.js';
import { grantedQueries } from './request-state.js';

/** What a permission guard needs of the guards that make it. */
export interface PermissionGuardContext {
  readonly authorizer: Authorizer;
  /** The authorizer's inventory, if it keeps one; the guard is registered there when made. */
  readonly inventory: Inventory | undefined;
  /** The adapter's mode, if it set one. */
  readonly mode: GuardMode | undefined;
  /** Where the guard sits, when the adapter said so (`guards.at`). */
  readonly route: InventoryRoute | undefined;
  /** Throws `error`, which leaves knowing its answer under the adapter's options. */
  readonly rejected: (error: unknown) => never;
  /** `rejected`, as a rejected promise. */
  readonly failed: (error: unknown) => Promise<never>;
}

/** The guard requiring `args` (checked by `parsePermissionArgs`). */
export function permissionGuard<Req>(context: PermissionGuardContext, { service, permissions, any, type, resolve, mode: routeMode }: PermissionArgs<Req>): Guard<Req> {
  const { authorizer, mode: adapterMode, rejected, failed } = context;
  const byNode = type === undefined;
  const asked = permissions.join(' or ');
  const single = permissions.length === 1;
  // Registered now, once: the request path below never touches the inventory. The route audit
  // records where it finds the guard (its mark's `place`).
  const mode = routeMode ?? adapterMode ?? authorizer.mode;
  const requirement = { service, permissions, any, resourceType: type, mode, route: context.route };
  context.inventory?.register(requirement);
  const mark = permissionMark({ service, permissions, type, resolve }, mode, (route) => context.inventory?.register({ ...requirement, route }));

  // The last question and answer of this guard, reused while they repeat (one resource asked
  // again and again, a cached token granted again): no query nor state object per request. The
  // state is frozen, being shared by the requests it is attached to.
  let lastQuery: AuthorizeQuery | undefined;
  let lastState: IamState | undefined;

  function queryOf(resolved: unknown, mode: GuardMode): AuthorizeQuery {
    const last = lastQuery;
    if (last !== undefined && last.mode === mode && (byNode ? (last.resource as { node: unknown }).node : (last.resource as { value: unknown }).value) === resolved) return last;
    return (lastQuery = Object.freeze({ service, permission: asked, resource: Object.freeze(byNode ? { node: resolved as string } : { type, value: resolved as string }), mode }));
  }

  /** The caller granted last without a shared state: the state is frozen and kept from its second grant on. */
  let lastGranted: Identity | undefined;
  /** {@link lastState} as a settled promise. */
  let lastAnswer: Promise<IamState> | undefined;

  /** The query of {@link lastState}: what its `signal` watches. */
  let lastStateQuery: AuthorizeQuery | undefined;

  // A granted state records its query, which its `signal` watches (request-state.ts); in `report`
  // mode none: a signal that aborted on a permission would enforce what report mode only logs.
  function grantedState(identity: Identity, decision: Decision, query: AuthorizeQuery): Promise<IamState> {
    const last = lastState;
    if (last?.decision === decision && last.claims === identity.claims && last.token === identity.token && lastStateQuery === query) return lastAnswer as Promise<IamState>;
    const watched = query.mode === 'report' ? [] : [query];
    // A caller seen once (distinct tokens) gets a state of its own, nothing frozen nor kept.
    if (lastGranted !== identity) {
      lastGranted = identity;
      return settled(grantedQueries({ token: identity.token, claims: identity.claims, decision }, watched));
    }
    lastState = grantedQueries(Object.freeze({ token: identity.token, claims: identity.claims, decision }), watched);
    lastStateQuery = query;
    return (lastAnswer = settled(lastState));
  }

  // Synchronous while every answer is at hand — a cached token and a remembered grant are settled
  // promises (see `settledValue`), the resolver returns a value — and then the guard's answer is a
  // settled promise too, which an adapter reads without awaiting. Anything else continues in the
  // async functions below, each kept small: an async function's locals are copied to the heap.
  return markGuard<Guard<Req>>((authorization, req) => {
    let authenticating: Promise<Identity>;
    try {
      authenticating = authorizer.authenticate(authorization);
    } catch (error) {
      return failed(error);
    }
    const identity = settledValue(authenticating);
    if (identity === undefined) return afterAuthentication(authenticating, req);
    // A resolver that throws is the application's bug: its error goes on untouched (a 500).
    // A value is used as it is; only a promise (or thenable) costs a tick.
    let returned: unknown;
    try {
      returned = resolve(req);
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the resolver's own error, untouched
      return Promise.reject(error);
    }
    return isThenable(returned) ? afterResolver(identity, returned) : decideResolved(identity, returned);
  }, mark);

  async function afterAuthentication(authenticating: Promise<Identity>, req: Req): Promise<IamState> {
    let identity: Identity;
    try {
      identity = await authenticating;
    } catch (error) {
      return rejected(error);
    }
    const returned: unknown = resolve(req);
    return decideResolved(identity, isThenable(returned) ? await returned : returned);
  }

  async function afterResolver(identity: Identity, returned: PromiseLike<unknown>): Promise<IamState> {
    return decideResolved(identity, await returned);
  }

  function decideResolved(identity: Identity, resolved: unknown): Promise<IamState> {
    const mode = routeMode ?? adapterMode ?? authorizer.mode;
    // Several resources or permissions: a batch, with per-resource bookkeeping.
    if (!single || Array.isArray(resolved)) return decideEach(identity, resolved, mode);
    // The usual route: one resource, one permission.
    let deciding: Promise<Decision>;
    const query = queryOf(resolved, mode);
    try {
      deciding = authorizer.authorize(identity, query);
    } catch (error) {
      return failed(error);
    }
    const decision = settledValue(deciding);
    return decision === undefined ? afterDecision(identity, deciding, query) : answer(identity, decision, query);
  }

  async function afterDecision(identity: Identity, deciding: Promise<Decision>, query: AuthorizeQuery): Promise<IamState> {
    let decision: Decision;
    try {
      decision = await deciding;
    } catch (error) {
      return rejected(error);
    }
    return answer(identity, decision, query);
  }

  function answer(identity: Identity, decision: Decision, query: AuthorizeQuery): Promise<IamState> {
    const { mode } = query;
    if (decision.granted) return grantedState(identity, decision, query);
    if (mode !== 'report') return failed(new PermissionDeniedError(decision, service, asked));
    return Promise.resolve({ token: identity.token, claims: identity.claims, decision, shadow: true });
  }

  async function decideEach(identity: Identity, resolved: unknown, mode: GuardMode): Promise<IamState> {
    // An empty list names no resource: it is checked as `undefined`, which denies.
    const values: readonly unknown[] = Array.isArray(resolved) && resolved.length > 0 ? resolved : [Array.isArray(resolved) ? undefined : resolved];
    const queries = values.flatMap((value) => permissions.map((permission) => ({
      service, permission, resource: byNode ? { node: value as string } : { type, value: value as string }, mode,
    })));
    let all: Decision[];
    try {
      all = queries.length === 1 ? [await authorizer.authorize(identity, queries[0] as AuthorizeQuery)] : await authorizer.authorizeMany(identity, queries);
    } catch (error) {
      return rejected(error);
    }
    // Per resource, the first granting decision (or the last denial): "any of these permissions".
    // The signal watches, per resource, the permission that granted there.
    const decisions: Decision[] = [];
    const watched: AuthorizeQuery[] = [];
    for (let v = 0; v < values.length; v++) {
      const forValue = all.slice(v * permissions.length, (v + 1) * permissions.length);
      const granting = forValue.findIndex((d) => d.granted);
      decisions.push(forValue[granting] ?? (forValue.at(-1) as Decision));
      if (granting >= 0) watched.push(queries[v * permissions.length + granting] as AuthorizeQuery);
    }
    const denial = decisions.find((d) => !d.granted);
    if (denial && mode !== 'report') return rejected(new PermissionDeniedError(denial, service, asked));
    const last = decisions[decisions.length - 1] as Decision; // one per resource, and at least one resource
    const decision = denial ?? last;
    const state: IamState = { token: identity.token, claims: identity.claims, decision };
    const withAll = decisions.length > 1 ? { ...state, decisions } : state;
    return denial ? { ...withAll, shadow: true } : grantedQueries(withAll, mode === 'report' ? [] : watched);
  }
}

/** What `await` would wait for: an object or function with a callable `then`. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
