/**
 * What a guard enforces, readable from the handler a framework holds: the route audit reads route
 * tables, finds each route's handlers there, and asks each one this. Kept on the handler itself
 * under `Symbol.for` (non-enumerable), so a handler made by another copy of the library is read
 * too, and nothing is looked up on the request path.
 */
import type { PermissionArgs } from '../permission-args.js';
import type { Requirement } from '../requirements.js';

/** One permission a guard asks for. */
export interface MarkedPermission {
  readonly service: string;
  readonly permission: string;
  /** The reference type (`VIN`); absent for a guard on node ids. */
  readonly resourceType?: string;
}

/** What one guard enforces. */
export type GuardMark =
  | {
    /** A permission guard: `permissions` (any one grants, for `requireAnyPermission`). */
    readonly access: 'permission';
    readonly permissions: readonly MarkedPermission[];
    /** Whether its resolver reads the request (a parameter); `false` for a fixed resource (`() => 'N-ROOT'`). */
    readonly scoped: boolean;
    /** `'report'`: a denial is only logged, so the guard enforces the token alone. */
    readonly mode: 'enforce' | 'report';
  }
  | {
    /** `authenticate()`: a valid token, no permission. */
    readonly access: 'authenticated';
  }
  | {
    /** `publicRoute()`, or `authenticate({ optional: true })`: anyone may call it, on purpose. */
    readonly access: 'public';
  };

const MARK: unique symbol = Symbol.for('iam-authz.guard-mark') as never;

/** Marks `handler` (a guard, or a framework's handler wrapping one) as enforcing `mark`; returns it. */
export function markGuard<H>(handler: H, mark: GuardMark | undefined): H {
  if (mark !== undefined && (typeof handler === 'function' || (typeof handler === 'object' && handler !== null))) {
    Object.defineProperty(handler, MARK, { value: mark, enumerable: false, configurable: true });
  }
  return handler;
}

/** The mark of a handler, or `undefined` for one that is no guard of this library. */
export function guardMarkOf(handler: unknown): GuardMark | undefined {
  if ((typeof handler !== 'function' && typeof handler !== 'object') || handler === null) return undefined;
  return (handler as { [MARK]?: GuardMark })[MARK];
}

/** Where the audit found a guard: `place` of {@link permissionMark} records it (in the inventory). */
const PLACE: unique symbol = Symbol('iam-authz.guard-place') as never;

/** Tells `mark`'s guard that the audit found it at `method` `path` (nothing for a mark without `place`). */
export function placeMark(mark: GuardMark | undefined, method: string, path: string): void {
  if (mark === undefined) return;
  (mark as { [PLACE]?: (route: { method: string; path: string }) => void })[PLACE]?.({ method, path });
}

/**
 * The mark of a permission guard of `args`; `place`, when given, is called with each route the
 * route audit finds the guard at (see {@link placeMark}).
 */
export function permissionMark<Req>(
  args: Pick<PermissionArgs<Req>, 'service' | 'permissions' | 'type' | 'resolve'>,
  mode: 'enforce' | 'report',
  place?: (route: { method: string; path: string }) => void,
): GuardMark {
  const { service, type } = args;
  const mark = {
    mode,
    access: 'permission',
    permissions: Object.freeze(args.permissions.map((permission) => Object.freeze(type === undefined ? { service, permission } : { service, permission, resourceType: type }))),
    // A resolver that takes no argument cannot read the request: it names a fixed resource.
    scoped: args.resolve.length > 0,
  } as const;
  if (place !== undefined) Object.defineProperty(mark, PLACE, { value: place, enumerable: false });
  return Object.freeze(mark);
}

/** The mark of `authenticate()` (`optional`: anyone may call the route). */
export function authenticateMark(optional: boolean): GuardMark {
  return optional ? PUBLIC : AUTHENTICATED;
}

export const PUBLIC: GuardMark = Object.freeze({ access: 'public' });
const AUTHENTICATED: GuardMark = Object.freeze({ access: 'authenticated' });

/**
 * The mark of a requirement a decorator recorded (NestJS): none recorded (`undefined`) is what the
 * adapter's global guard does — `authenticate()` — or, without one, nothing (`'unguarded'`).
 */
export function requirementMark<Req>(requirement: Requirement<Req> | undefined, mode: 'enforce' | 'report', globalGuard = true): GuardMark | undefined {
  if (requirement === undefined) return globalGuard ? AUTHENTICATED : undefined;
  if (requirement.kind === 'public') return PUBLIC;
  if (requirement.kind === 'authenticated') return authenticateMark(requirement.optional === true);
  return permissionMark(requirement, requirement.mode ?? mode);
}
