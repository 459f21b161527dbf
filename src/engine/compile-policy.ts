/**
 * Compiles a role policy into role → service → permission-set lookups, so that a decision costs
 * O(roles matched) instead of a scan of the whole policy. Maps and Sets only: names such as
 * `__proto__` or `constructor` are plain keys, never prototype members.
 */
import type { RolePolicy } from '../types.js';

/** role key → service key → granted permission keys. */
export type RoleIndex = ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;

/** A policy compiled for O(1) lookups per role. */
export interface CompiledPolicy {
  readonly applicationId: string;
  readonly changeId: string;
  readonly roles: RoleIndex;
}

export function compilePolicy(policy: RolePolicy): CompiledPolicy {
  const steps = compileSteps(policy);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/**
 * Items (roles, service policies and permissions) compiled between two turns of the event loop by
 * {@link compilePolicyYielding}: about 2–5 ms of work on a loaded two-core machine.
 */
export const ITEMS_PER_TURN = 25_000;

/**
 * The same compile, handing the event loop back every {@link ITEMS_PER_TURN} items. The work is
 * counted in permissions, not roles: one role may hold most of a large policy (a 16 MiB policy of
 * one role has ≈ 900,000 permissions), and requests of other applications, which have their
 * policy, should not wait behind it. `yieldTurn` defaults to one `setImmediate` turn.
 */
export async function compilePolicyYielding(policy: RolePolicy, yieldTurn: () => Promise<void> = nextTurn): Promise<CompiledPolicy> {
  const steps = compileSteps(policy);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    await yieldTurn();
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Most entries of one `Map` or `Set` of the index before it is split into {@link SHARDS} parts:
 * V8 grows a hash table by rehashing all of it in one go (≈ 50 ms at 512k entries on a loaded
 * two-core machine, a stall no yielding can cut), so no table of the index is allowed to grow big.
 */
export const SHARD_THRESHOLD = 32_768;
/** Parts of a split table: a policy of 16 MiB has at most ≈ 1.4 million roles, 22k per part. */
const SHARDS = 64;

/** Which part of a split table holds `key` (a 31-multiplier string hash). */
function shardOf(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return h & (SHARDS - 1);
}

/**
 * A `Set` of strings split into {@link SHARDS} `Set`s by hash, for the permissions of one role in one
 * service past {@link SHARD_THRESHOLD}. Iterates part by part: not in insertion order.
 */
export class ShardedSet implements ReadonlySet<string> {
  readonly #parts: Set<string>[] = Array.from({ length: SHARDS }, () => new Set<string>());
  #size = 0;
  constructor(keys: Iterable<string>) {
    for (const key of keys) this.add(key);
  }
  get size(): number {
    return this.#size;
  }
  add(key: string): void {
    const part = this.#parts[shardOf(key)] as Set<string>;
    const before = part.size;
    part.add(key);
    this.#size += part.size - before;
  }
  has(key: string): boolean {
    return (this.#parts[shardOf(key)] as Set<string>).has(key);
  }
  forEach(callback: (value: string, key: string, set: ReadonlySet<string>) => void, thisArg?: unknown): void {
    for (const key of this) callback.call(thisArg, key, key, this);
  }
  *values(): SetIterator<string> {
    for (const part of this.#parts) yield* part;
  }
  keys(): SetIterator<string> {
    return this.values();
  }
  *entries(): SetIterator<[string, string]> {
    for (const key of this) yield [key, key];
  }
  [Symbol.iterator](): SetIterator<string> {
    return this.values();
  }
}

/** A `Map` with string keys split like {@link ShardedSet}, for roles and their services. */
export class ShardedMap<V> implements ReadonlyMap<string, V> {
  readonly #parts: Map<string, V>[] = Array.from({ length: SHARDS }, () => new Map<string, V>());
  #size = 0;
  constructor(entries: Iterable<readonly [string, V]>) {
    for (const [key, value] of entries) this.set(key, value);
  }
  get size(): number {
    return this.#size;
  }
  set(key: string, value: V): void {
    const part = this.#parts[shardOf(key)] as Map<string, V>;
    const before = part.size;
    part.set(key, value);
    this.#size += part.size - before;
  }
  get(key: string): V | undefined {
    return (this.#parts[shardOf(key)] as Map<string, V>).get(key);
  }
  has(key: string): boolean {
    return (this.#parts[shardOf(key)] as Map<string, V>).has(key);
  }
  forEach(callback: (value: V, key: string, map: ReadonlyMap<string, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this) callback.call(thisArg, value, key, this);
  }
  *entries(): MapIterator<[string, V]> {
    for (const part of this.#parts) yield* part;
  }
  *keys(): MapIterator<string> {
    for (const part of this.#parts) yield* part.keys();
  }
  *values(): MapIterator<V> {
    for (const part of this.#parts) yield* part.values();
  }
  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }
}

type Table<V> = Map<string, V> | ShardedMap<V>;
type PermissionSet = Set<string> | ShardedSet;

/** The compile; yields after every {@link ITEMS_PER_TURN} items. */
function* compileSteps(policy: RolePolicy): Generator<void, CompiledPolicy> {
  let roles: Table<Table<PermissionSet>> = new Map();
  let work = 0;
  for (const role of policy.roles) {
    if (++work >= ITEMS_PER_TURN) { work = 0; yield; }
    let services = roles.get(role.key);
    if (!services) {
      services = new Map();
      roles.set(role.key, services);
      if (roles instanceof Map && roles.size > SHARD_THRESHOLD) {
        roles = new ShardedMap(roles);
        work += SHARD_THRESHOLD;
      }
    }
    for (const sp of role.servicePolicies ?? []) {
      if (++work >= ITEMS_PER_TURN) { work = 0; yield; }
      let permissions = services.get(sp.serviceDefinitionKey);
      if (!permissions) {
        permissions = new Set();
        services.set(sp.serviceDefinitionKey, permissions);
        if (services instanceof Map && services.size > SHARD_THRESHOLD) {
          services = new ShardedMap(services);
          roles.set(role.key, services);
          work += SHARD_THRESHOLD;
        }
      }
      for (const permission of sp.permissions) {
        if (++work >= ITEMS_PER_TURN) { work = 0; yield; }
        permissions.add(permission.key);
        if (permissions instanceof Set && permissions.size > SHARD_THRESHOLD) {
          permissions = new ShardedSet(permissions);
          services.set(sp.serviceDefinitionKey, permissions);
          work += SHARD_THRESHOLD;
        }
      }
    }
  }
  return { applicationId: policy.applicationId, changeId: policy.changeId, roles };
}
