/**
 * The permission inventory of one authorizer: what its guards ask for, registered when each guard is
 * created (never per request), and the drift check that holds it against each application's policy
 * once per new `changeId`, warning (`IAM_AUTHZ_UNGRANTED_PERMISSION`) about every inventoried
 * permission that no role grants — a guard whose every request would be a correct-looking 403.
 */
import type { CompiledPolicy } from './engine/compile-policy.js';
import { byCodeUnits, closest } from './lib/closest.js';
import { singleQuotedForLog } from './lib/log-text.js';
import type { Log } from './lib/logger.js';

/**
 * Where a guard sits: an HTTP route (said at guard creation, or found by `auditRoutes`), or a Nest handler.
 * @inline
 */
export type InventoryRoute =
  | {
    /** HTTP method, e.g. `GET`. */
    readonly method: string;
    /** Route path as the framework declares it (`/vehicles/:vin`), or in OpenAPI form when `auditRoutes` found it (`/vehicles/{vin}`). */
    readonly path: string;
  }
  | {
    /** NestJS controller (or resolver, gateway) class name. */
    readonly controller: string;
    /** Its handler method's name. */
    readonly handler: string;
  };

/** One thing the service asks for; plain JSON. */
export interface InventoryEntry {
  /** The service key, e.g. `vehicle-service`. */
  readonly service: string;
  /** The permission of a `requirePermission` guard. */
  readonly permission?: string;
  /** The permissions of a `requireAnyPermission` guard (any one grants), in the guard's order. */
  readonly permissions?: readonly string[];
  /** The reference type (`VIN`) of a `TYPE=value` guard; absent for a node-id guard. */
  readonly resourceType?: string;
  /** `true` for a guard on node ids (`{ node: resolve }`). */
  readonly node?: true;
  /** The guard's mode, as its route, adapter and authorizer settle it. */
  readonly mode: 'enforce' | 'report';
  /** Where the guard sits: as the framework said when the guard was made, or as `auditRoutes` found it (an entry per route). */
  readonly route?: InventoryRoute;
}

/** An inventoried (or asked) permission that no role of an application's policy grants. */
export interface UngrantedPermission {
  /** The service key a guard asks for. */
  readonly service: string;
  /** The permission key no role grants in it. */
  readonly permission: string;
  /** `false` when no role grants anything at all in `service` (often a mistyped service key). */
  readonly serviceGranted: boolean;
  /** A granted name that differs by case or a typo: the service's when `serviceGranted` is `false`, else the permission's. */
  readonly didYouMean?: string;
}

/** What a guard registers. */
export interface Requirement {
  readonly service: string;
  readonly permissions: readonly string[];
  /** `requireAnyPermission`. */
  readonly any: boolean;
  /** `undefined`: a node-id guard. */
  readonly resourceType: string | undefined;
  readonly mode: 'enforce' | 'report';
  readonly route?: InventoryRoute | undefined;
}

export interface Inventory {
  readonly register: (requirement: Requirement) => void;
  readonly entries: () => InventoryEntry[];
  /** Called by the decider with each policy it evaluates that differs from the last one. */
  readonly policyInForce: (policy: CompiledPolicy) => void;
  /** Called when the policy cache drops `policy` (its application evicted): its state goes too. */
  readonly policyDropped: (policy: CompiledPolicy) => void;
  readonly ungranted: (applicationId: string, pairs?: readonly { service: string; permission: string }[]) => UngrantedPermission[] | undefined;
  readonly stats: () => InventoryStats;
}

/** Where an authorizer keeps its inventory; `Symbol.for`, so that two copies of the library agree. */
export const INVENTORY: unique symbol = Symbol.for('iam-authz.inventory') as never;

/** The inventory of an authorizer made by `createAuthorizer` (or a spread copy of one); else `undefined`. */
export function inventoryOf(authorizer: object): Inventory | undefined {
  return (authorizer as { [INVENTORY]?: Inventory })[INVENTORY];
}

export const UNGRANTED_CODE = 'IAM_AUTHZ_UNGRANTED_PERMISSION';
/** The code of the process warning that the inventory is full. */
export const FULL_CODE = 'IAM_AUTHZ_INVENTORY_FULL';

interface AppState {
  readonly policy: CompiledPolicy;
  /** service → what any role grants in it; filled per service on demand. */
  readonly granted: Map<string, Set<string>>;
  serviceNames: string[] | undefined;
  /** `service\0permission` already warned about under this policy. */
  readonly warned: Set<string>;
  /** What no role grants of every inventoried permission, computed once per inventory {@link version}. */
  ungranted: { readonly version: number; readonly list: readonly UngrantedPermission[] } | undefined;
}

/**
 * Most entries an inventory holds. A guard made beyond it still enforces; it is only not listed
 * (`status().inventory.dropped` counts them). Guards are made at start-up: one made per request,
 * with a name the caller chose, would otherwise grow the inventory without end.
 */
export const MAX_INVENTORY_ENTRIES = 5_000;
/** Most ungranted permissions warned about one by one per application and `changeId`; one more line says the rest are in `status()`. */
export const MAX_WARNINGS_PER_POLICY = 10;

/** The "did you mean" of a name no role grants, among the granted ones (default {@link closest}; tests count its calls). */
export type Suggest = (name: string, candidates: Iterable<string>) => string | undefined;

/** How full an inventory is: see {@link MAX_INVENTORY_ENTRIES}. */
export interface InventoryStats {
  /** Entries held. */
  readonly entries: number;
  /** Most entries held ({@link MAX_INVENTORY_ENTRIES}). */
  readonly maxEntries: number;
  /** Registrations of new entries refused since the inventory was full (their guards still enforce). */
  readonly dropped: number;
}

/**
 * The registry of one authorizer. `warn` reports each ungranted permission once per application
 * and `changeId` (a process warning), at most {@link MAX_WARNINGS_PER_POLICY} of them; `log`, when
 * the authorizer has a logger, gets the same lines.
 */
export function createInventory(warn: (message: string, code?: string) => void = emit, log?: Log, suggest: Suggest = closest): Inventory {
  const byKey = new Map<string, InventoryEntry>();
  /** service → permissions, every permission of every entry. */
  const pairs = new Map<string, Set<string>>();
  /** Changes whenever {@link pairs} grows: a cached ungranted list of an older version is recomputed. */
  let version = 0;
  let dropped = 0;
  const apps = new Map<string, AppState>();

  function register(requirement: Requirement): void {
    const { service, permissions, any, resourceType, mode, route } = requirement;
    const routeKey = route === undefined ? '' : 'method' in route ? `${route.method} ${route.path}` : `${route.controller}.${route.handler}`;
    const key = [service, any ? `any:${permissions.join('\u0001')}` : permissions[0], resourceType ?? '\u0001node', mode, routeKey].join('\u0000');
    if (byKey.has(key)) return;
    // The route audit found an unplaced guard at a route: listed there instead.
    if (routeKey !== '') byKey.delete(key.slice(0, key.length - routeKey.length));
    if (byKey.size >= MAX_INVENTORY_ENTRIES) {
      if (dropped++ === 0) full();
      return;
    }
    byKey.set(key, {
      service,
      ...(any ? { permissions: [...permissions] } : { permission: permissions[0] as string }),
      ...(resourceType === undefined ? { node: true as const } : { resourceType }),
      mode,
      ...(route === undefined ? {} : { route: { ...route } }),
    });
    const fresh: { service: string; permission: string }[] = [];
    let known = pairs.get(service);
    if (!known) pairs.set(service, known = new Set());
    for (const permission of permissions) {
      if (!known.has(permission)) fresh.push({ service, permission });
      known.add(permission);
    }
    if (fresh.length === 0) return;
    version += 1;
    // A guard made after a policy was fetched is held against the policy in hand at once.
    for (const [app, state] of apps) report(app, state, check(state, fresh, suggest));
  }

  function full(): void {
    const message = `iam-authz: the inventory holds ${MAX_INVENTORY_ENTRIES} guards, its most; guards made from now on still enforce but are not listed (are guards made per request, with names taken from the request?)`;
    warn(message, FULL_CODE);
    log?.warn('inventory full', { event: 'iam-authz.inventory-full', maxEntries: MAX_INVENTORY_ENTRIES }, message);
  }

  function entries(): InventoryEntry[] {
    const keys = [...byKey.keys()].sort(byCodeUnits);
    // A deep copy: what the caller does with it never changes the inventory.
    return keys.map((key) => JSON.parse(JSON.stringify(byKey.get(key))) as InventoryEntry);
  }

  function policyInForce(policy: CompiledPolicy): void {
    const app = policy.applicationId;
    const previous = apps.get(app);
    if (previous?.policy === policy || previous?.policy.changeId === policy.changeId) return;
    const state: AppState = { policy, granted: new Map(), serviceNames: undefined, warned: new Set(), ungranted: undefined };
    apps.set(app, state);
    report(app, state, ungrantedOf(state));
  }

  /** The policy cache no longer holds `policy` (its application was evicted): neither does the inventory. */
  function policyDropped(policy: CompiledPolicy): void {
    if (apps.get(policy.applicationId)?.policy === policy) apps.delete(policy.applicationId);
  }

  /** Every inventoried permission `state`'s policy leaves ungranted: computed once per version. */
  function ungrantedOf(state: AppState): readonly UngrantedPermission[] {
    if (state.ungranted?.version !== version) {
      const all = [...pairs].flatMap(([service, set]) => [...set].map((permission) => ({ service, permission })));
      state.ungranted = { version, list: Object.freeze(check(state, all, suggest).map((missing) => Object.freeze(missing))) };
    }
    return state.ungranted.list;
  }

  function report(app: string, state: AppState, missing: readonly UngrantedPermission[]): void {
    for (const one of missing) {
      const key = `${one.service}\u0000${one.permission}`;
      if (state.warned.has(key)) continue;
      state.warned.add(key);
      if (state.warned.size > MAX_WARNINGS_PER_POLICY + 1) continue;
      const message = state.warned.size > MAX_WARNINGS_PER_POLICY ? describeRest(app, state.policy.changeId) : describe(app, one);
      warn(message);
      log?.warn(`ungranted ${app}`, { event: 'iam-authz.ungranted', application: app, service: one.service, permission: one.permission }, message);
    }
  }

  function ungranted(applicationId: string, asked?: readonly { service: string; permission: string }[]): UngrantedPermission[] | undefined {
    if (typeof applicationId !== 'string') throw new TypeError('ungranted: "applicationId" must be a string');
    if (asked !== undefined && (!Array.isArray(asked) || !asked.every((p: Partial<Record<'service' | 'permission', unknown>> | null) => typeof p?.service === 'string' && typeof p.permission === 'string'))) {
      throw new TypeError('ungranted: "permissions" must be an array of { service, permission }');
    }
    const state = apps.get(applicationId);
    if (state === undefined) return undefined;
    // A copy: what the caller does with it never changes the inventory.
    return asked === undefined ? ungrantedOf(state).map((missing) => ({ ...missing })) : check(state, asked, suggest);
  }

  return { register, entries, policyInForce, policyDropped, ungranted, stats: () => ({ entries: byKey.size, maxEntries: MAX_INVENTORY_ENTRIES, dropped }) };
}

/** The asked pairs no role of the policy grants, sorted by service and permission. */
function check(state: AppState, asked: readonly { service: string; permission: string }[], suggest: Suggest): UngrantedPermission[] {
  const found: UngrantedPermission[] = [];
  for (const { service, permission } of asked) {
    const granted = grantedIn(state, service);
    if (granted.has(permission)) continue;
    const serviceGranted = granted.size > 0;
    const near = serviceGranted ? suggest(permission, granted) : suggest(service, serviceNamesOf(state));
    found.push({ service, permission, serviceGranted, ...(near === undefined ? {} : { didYouMean: near }) });
  }
  return found.sort((a, b) => byCodeUnits(a.service, b.service) || byCodeUnits(a.permission, b.permission));
}

function grantedIn(state: AppState, service: string): Set<string> {
  let set = state.granted.get(service);
  if (set) return set;
  set = new Set();
  for (const services of state.policy.roles.values()) {
    const permissions = services.get(service);
    if (permissions) for (const permission of permissions) set.add(permission);
  }
  state.granted.set(service, set);
  return set;
}

function serviceNamesOf(state: AppState): string[] {
  if (state.serviceNames) return state.serviceNames;
  const names = new Set<string>();
  for (const services of state.policy.roles.values()) {
    for (const [service, permissions] of services) if (permissions.size > 0) names.add(service);
  }
  return (state.serviceNames = [...names]);
}

/** Each application's status entry with what its policy in hand leaves ungranted (plain JSON). */
export function withUngranted<E extends object>(inventory: Inventory, applications: Record<string, Record<string, E>>): Record<string, Record<string, E & { ungranted: UngrantedPermission[] }>> {
  const out: Record<string, Record<string, E & { ungranted: UngrantedPermission[] }>> = {};
  for (const [issuer, apps] of Object.entries(applications)) {
    out[issuer] = Object.fromEntries(Object.entries(apps).map(([app, entry]) => [app, { ...entry, ungranted: inventory.ungranted(app) ?? [] }]));
  }
  return out;
}

/** The warning's text; names are quoted with control and bidi characters escaped. */
export function describe(app: string, missing: UngrantedPermission): string {
  const { service, permission, serviceGranted, didYouMean } = missing;
  const hint = didYouMean === undefined ? '' : ` (did you mean ${quote(didYouMean)}?)`;
  const why = serviceGranted ? hint : `: no role grants anything in service ${quote(service)}${hint}`;
  return `iam-authz: no role of application ${quote(app)} grants permission ${quote(permission)} of service ${quote(service)}${why}; `
    + 'every request its guards check is denied';
}

function emit(message: string, code = UNGRANTED_CODE): void {
  process.emitWarning(message, { code });
}

/** The line after {@link MAX_WARNINGS_PER_POLICY} warnings about one policy. */
function describeRest(app: string, changeId: string): string {
  return `iam-authz: more permissions that no role of application ${quote(app)} grants (changeId ${quote(changeId)}) are not warned about one by one; authorizer.status() lists them all`;
}

function quote(name: string): string {
  return singleQuotedForLog(name);
}

