/**
 * The permission inventory of one authorizer: what its guards ask for, registered when each guard is
 * created (never per request), and the drift check that holds it against each application's policy
 * once per new `changeId`, warning (`IAM_AUTHZ_UNGRANTED_PERMISSION`) about every inventoried
 * permission that no role grants — a guard whose every request would be a correct-looking 403.
 */
import type { CompiledPolicy } from './engine/compile-policy.js';
import { singleQuotedForLog } from './lib/log-text.js';
import type { Log } from './lib/logger.js';

/** Where a guard sits, when the framework says so at guard creation: an HTTP route, or a Nest handler. */
export type InventoryRoute =
  | {
    /** HTTP method, e.g. `GET`. */
    readonly method: string;
    /** Route path as the framework declares it, e.g. `/vehicles/:vin`. */
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
  /** Where the guard sits, where the framework knows it when the guard is made. */
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
  readonly ungranted: (applicationId: string, pairs?: readonly { service: string; permission: string }[]) => UngrantedPermission[] | undefined;
}

/** Where an authorizer keeps its inventory; `Symbol.for`, so that two copies of the library agree. */
export const INVENTORY: unique symbol = Symbol.for('iam-authz.inventory') as never;

/** The inventory of an authorizer made by `createAuthorizer` (or a spread copy of one); else `undefined`. */
export function inventoryOf(authorizer: object): Inventory | undefined {
  return (authorizer as { [INVENTORY]?: Inventory })[INVENTORY];
}

export const UNGRANTED_CODE = 'IAM_AUTHZ_UNGRANTED_PERMISSION';

interface AppState {
  readonly policy: CompiledPolicy;
  /** service → what any role grants in it; filled per service on demand. */
  readonly granted: Map<string, Set<string>>;
  serviceNames: string[] | undefined;
  /** `service\0permission` already warned about under this policy. */
  readonly warned: Set<string>;
}

/**
 * The registry of one authorizer. `warn` reports each ungranted permission once per application
 * and `changeId` (a process warning); `log`, when the authorizer has a logger, gets the same line.
 */
export function createInventory(warn: (message: string) => void = emit, log?: Log): Inventory {
  const byKey = new Map<string, InventoryEntry>();
  /** service → permissions, every permission of every entry. */
  const pairs = new Map<string, Set<string>>();
  const apps = new Map<string, AppState>();

  function register(requirement: Requirement): void {
    const { service, permissions, any, resourceType, mode, route } = requirement;
    const routeKey = route === undefined ? '' : 'method' in route ? `${route.method} ${route.path}` : `${route.controller}.${route.handler}`;
    const key = [service, any ? `any:${permissions.join('\u0001')}` : permissions[0], resourceType ?? '\u0001node', mode, routeKey].join('\u0000');
    if (byKey.has(key)) return;
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
    // A guard made after a policy was fetched is held against the policy in hand at once.
    if (fresh.length > 0) for (const [app, state] of apps) report(app, state, fresh);
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
    const state: AppState = { policy, granted: new Map(), serviceNames: undefined, warned: new Set() };
    apps.set(app, state);
    report(app, state, allPairs());
  }

  function allPairs(): { service: string; permission: string }[] {
    return [...pairs].flatMap(([service, set]) => [...set].map((permission) => ({ service, permission })));
  }

  function report(app: string, state: AppState, asked: readonly { service: string; permission: string }[]): void {
    for (const missing of check(state, asked)) {
      const key = `${missing.service}\u0000${missing.permission}`;
      if (state.warned.has(key)) continue;
      state.warned.add(key);
      const message = describe(app, missing);
      warn(message);
      log?.warn(`ungranted ${app}`, { event: 'iam-authz.ungranted', application: app, service: missing.service, permission: missing.permission }, message);
    }
  }

  function ungranted(applicationId: string, asked?: readonly { service: string; permission: string }[]): UngrantedPermission[] | undefined {
    if (typeof applicationId !== 'string') throw new TypeError('ungranted: "applicationId" must be a string');
    if (asked !== undefined && (!Array.isArray(asked) || !asked.every((p: Partial<Record<'service' | 'permission', unknown>> | null) => typeof p?.service === 'string' && typeof p.permission === 'string'))) {
      throw new TypeError('ungranted: "permissions" must be an array of { service, permission }');
    }
    const state = apps.get(applicationId);
    return state && check(state, asked ?? allPairs());
  }

  return { register, entries, policyInForce, ungranted };
}

/** The asked pairs no role of the policy grants, sorted by service and permission. */
function check(state: AppState, asked: readonly { service: string; permission: string }[]): UngrantedPermission[] {
  const found: UngrantedPermission[] = [];
  for (const { service, permission } of asked) {
    const granted = grantedIn(state, service);
    if (granted.has(permission)) continue;
    const serviceGranted = granted.size > 0;
    const near = serviceGranted ? closest(permission, granted) : closest(service, serviceNamesOf(state));
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

/** The warning's text; names are quoted with control and bidi characters escaped. */
/** Each application's status entry with what its policy in hand leaves ungranted (plain JSON). */
export function withUngranted<E extends object>(inventory: Inventory, applications: Record<string, Record<string, E>>): Record<string, Record<string, E & { ungranted: UngrantedPermission[] }>> {
  const out: Record<string, Record<string, E & { ungranted: UngrantedPermission[] }>> = {};
  for (const [issuer, apps] of Object.entries(applications)) {
    out[issuer] = Object.fromEntries(Object.entries(apps).map(([app, entry]) => [app, { ...entry, ungranted: (inventory.ungranted(app) ?? []).map((missing) => ({ ...missing })) }]));
  }
  return out;
}

export function describe(app: string, missing: UngrantedPermission): string {
  const { service, permission, serviceGranted, didYouMean } = missing;
  const hint = didYouMean === undefined ? '' : ` (did you mean ${quote(didYouMean)}?)`;
  const why = serviceGranted ? hint : `: no role grants anything in service ${quote(service)}${hint}`;
  return `iam-authz: no role of application ${quote(app)} grants permission ${quote(permission)} of service ${quote(service)}${why}; `
    + 'every request its guards check is denied';
}

function emit(message: string): void {
  process.emitWarning(message, { code: UNGRANTED_CODE });
}

function quote(name: string): string {
  return singleQuotedForLog(name);
}

/** A granted name equal ignoring case, else the nearest within 2 edits (Damerau–Levenshtein); ties: code-unit order. */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of [...candidates].sort(byCodeUnits)) {
    if (candidate.toLowerCase() === lower) return candidate;
    // Names far longer or shorter cannot be within 2 edits; short names are not guessed at.
    if (Math.abs(candidate.length - name.length) > 2 || Math.min(candidate.length, name.length) < 3) continue;
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Damerau–Levenshtein (optimal string alignment): insertions, deletions, substitutions, adjacent swaps. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((rows[i - 1] as number[])[j] as number + 1, row[j - 1] as number + 1, (rows[i - 1] as number[])[j - 1] as number + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (rows[i - 2] as number[])[j - 2] as number + 1);
      row[j] = d;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
