/**
 * Requirements recorded before any guard exists — by decorators, which run when a class is
 * defined, before the adapter has its authorizer (NestJS) — and the one guard each stands for,
 * made once and shared by every request and every guard instance.
 */
import type { InventoryRoute } from '../inventory.js';
import type { Guard, InternalGuards } from './guard-types.js';
import type { PermissionArgs } from './permission-args.js';

/** What a handler or class requires, as a decorator records it. */
export type Requirement<Req> =
  | {
    /** No token needed. */
    readonly kind: 'public';
  }
  | {
    /** A valid token, no permission. */
    readonly kind: 'authenticated';
    /** A request without `Authorization` passes anonymously (`authenticate({ optional: true })`). */
    readonly optional?: boolean;
  }
  | (PermissionArgs<Req> & {
    /** A permission guard; the arguments as `parsePermissionArgs` checked them. */
    readonly kind: 'permission';
  });

/** The guards of recorded requirements; from {@link createRequirementGuards}. */
export interface RequirementGuards<Req> {
  /**
   * The guard of `requirement`, made on first use and then reused (one per requirement object).
   * None recorded (`undefined`) requires a valid token: fail closed. `public` also maps to
   * `authenticate()`: skipping a public route is the adapter's decision.
   */
  guardFor(requirement: Requirement<Req> | undefined): Guard<Req>;
  /**
   * Before any request: makes the guard of a permission requirement, inventoried with `route`
   * (where the requirement sits; a requirement shared by several handlers is listed at each).
   * Other kinds need no guard made ahead.
   */
  prepare(route: InventoryRoute, requirement: Requirement<Req> | undefined): void;
}

/** Builds the guards of recorded requirements over `guards` (from `createInternalGuards`). */
export function createRequirementGuards<Req>(guards: InternalGuards<Req>): RequirementGuards<Req> {
  const made = new WeakMap<Requirement<Req>, Guard<Req>>();
  let authenticate: Guard<Req> | undefined;
  return {
    guardFor(requirement) {
      if (requirement === undefined || requirement.kind === 'public' || (requirement.kind === 'authenticated' && requirement.optional !== true)) return authenticate ??= guards.authenticate();
      let guard = made.get(requirement);
      if (guard === undefined) {
        guard = requirement.kind === 'authenticated' ? guards.authenticate({ optional: true }) : guards.permission(requirement);
        made.set(requirement, guard);
      }
      return guard;
    },
    prepare(route, requirement) {
      if (requirement?.kind !== 'permission') return;
      const guard = guards.at(route, () => guards.permission(requirement));
      if (!made.has(requirement)) made.set(requirement, guard);
    },
  };
}
