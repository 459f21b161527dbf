/**
 * Verified-token cache: a bounded LRU of verified tokens. An entry lives until
 * `min(exp, verifiedAt + maxTtlMs)` and is checked against the clock on every hit, so it is never
 * served after the token's `exp`.
 *
 * The LRU is keyed by the token's last {@link KEY_CHARS} characters (256 bits of its signature) and
 * a hit is confirmed by comparing the whole token string: hashing a fresh 700-character header
 * string costs about a microsecond, the compare a few nanoseconds. Only verified tokens are stored,
 * so a forged token sharing a suffix can at worst miss.
 *
 * Admission: while the LRU has room every verified token is stored; once it is full, a token is
 * stored only when it is verified a second time within a while (a doorkeeper of recently seen
 * hashes, as in TinyLFU). A stream of distinct tokens — a login burst, many short-lived users —
 * then leaves the cache alone instead of turning it over, so the identities it would have kept do
 * not survive into the old generation and the garbage collector's cost per request stays that of
 * `tokenCache: false` (issue #14 §1); a token used again is cached from its second verification.
 *
 * In front of the LRU, a small direct-mapped table remembers which whole `Authorization` header
 * led to which entry: a request presenting the same header again finds its entry without slicing
 * or hashing the token, and gets the same settled promise of its identity — no allocation on the
 * cached path. A front hit is confirmed by comparing the whole header, and stands only while the
 * LRU still holds that very entry (looked up by the key kept in the entry, which also refreshes
 * its recency) and its lifetime has not run out.
 */
import { randomInt } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Identity } from '../types.js';

const KEY_CHARS = 43;
/** Doorkeeper slots per cache entry (rounded up to a power of two, at least 1,024). */
const DOORKEEPER_FACTOR = 2;

function keyOf(token: string): string {
  return token.length > KEY_CHARS ? token.slice(-KEY_CHARS) : token;
}

/**
 * The options object of every `LRUCache.get`: without one, `get` makes an empty `{}` per call.
 * `get` writes its `status` (`undefined` unless lru-cache's metrics channel has subscribers) into
 * it; the calls are synchronous, so one shared object serves them all.
 */
const GET_OPTIONS: LRUCache.GetOptions<string, CacheEntry, unknown> = {};

/** Front-table slots per cache (at most; fewer for a smaller cache). */
const FRONT_SLOTS = 256;

/** One verified token in the LRU. */
export interface CacheEntry {
  readonly identity: Identity;
  readonly expiresAtMs: number;
  /** The LRU key (the token's last characters), kept so that a front hit looks it up without slicing the token again. */
  readonly key: string;
  /** The identity as a settled promise: made on the first front hit, then handed to every later one. */
  promise: Promise<Identity> | undefined;
}

interface FrontSlot {
  /** The whole `Authorization` header value that led to `entry` ('' for an empty slot). */
  header: string;
  entry: CacheEntry | undefined;
}

/** Front-table slot of a header: a few characters of the token's signature (its last characters), no allocation. */
function frontSlot(header: string, mask: number): number {
  const n = header.length;
  if (n < 4) return 0;
  return (header.charCodeAt(n - 1) ^ (header.charCodeAt(n - 2) << 3) ^ (header.charCodeAt(n - 3) << 6) ^ (header.charCodeAt(n - 4) << 9)) & mask;
}

export class TokenCache {
  readonly #lru: LRUCache<string, CacheEntry>;
  readonly #front: FrontSlot[];
  readonly #frontMask: number;
  readonly #maxTtlMs: number;
  readonly #max: number;
  /** Hashes of tokens verified once while the cache was full; 0 is an empty slot. */
  readonly #doorkeeper: Uint32Array;
  readonly #mask: number;
  /**
   * Per process, so which tokens share a doorkeeper slot cannot be worked out in advance. Drawn on
   * first use, not at construction: workerd refuses random values at global scope, where a Worker
   * may build its authorizer.
   */
  #seed: number | undefined;
  #generation = 0;

  constructor(max: number, maxTtlMs: number) {
    this.#lru = new LRUCache<string, CacheEntry>({ max });
    let front = 16;
    while (front < max && front < FRONT_SLOTS) front *= 2;
    this.#front = Array.from({ length: front }, () => ({ header: '', entry: undefined }));
    this.#frontMask = front - 1;
    this.#max = max;
    this.#maxTtlMs = maxTtlMs;
    let slots = 1024;
    while (slots < max * DOORKEEPER_FACTOR && slots < 1 << 24) slots *= 2;
    this.#doorkeeper = new Uint32Array(slots);
    this.#mask = slots - 1;
  }

  /** Doorkeeper hash, on the miss path only: seeded FNV-1a over the key; never 0 (an empty slot). */
  #hash(key: string): number {
    let h = (0x811c9dc5 ^ (this.#seed ??= randomInt(0x7fffffff))) >>> 0;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    return (h >>> 0) || 1;
  }

  get(token: string, nowMs: number): Identity | undefined {
    return this.entry(token, nowMs)?.identity;
  }

  /** The live entry of `token`, or `undefined`; an expired one is dropped. */
  entry(token: string, nowMs: number): CacheEntry | undefined {
    const key = keyOf(token);
    const entry = this.#lru.get(key, GET_OPTIONS);
    if (entry?.identity.token !== token) return undefined;
    if (entry.expiresAtMs > nowMs) return entry;
    this.#lru.delete(key);
    return undefined;
  }

  /**
   * The live entry that the `Authorization` header value `header` led to before ({@link remember}),
   * or `undefined` (then look the token up with {@link entry}). Allocates nothing.
   */
  byHeader(header: string, nowMs: number): CacheEntry | undefined {
    const slot = this.#front[frontSlot(header, this.#frontMask)] as FrontSlot;
    const { entry } = slot;
    if (entry === undefined || slot.header !== header) return undefined;
    // Still the LRU's entry (not evicted, replaced or cleared); the get refreshes its recency.
    if (this.#lru.get(entry.key, GET_OPTIONS) !== entry || entry.expiresAtMs <= nowMs) {
      slot.header = '';
      slot.entry = undefined;
      return undefined;
    }
    return entry;
  }

  /** Remembers that `header` (a whole `Authorization` value) carries the token of `entry`, for {@link byHeader}. */
  remember(header: string, entry: CacheEntry): void {
    const slot = this.#front[frontSlot(header, this.#frontMask)] as FrontSlot;
    slot.header = header;
    slot.entry = entry;
  }

  /** Changes on every `clear()`: a verification started before a clear must not be stored after it. */
  get generation(): number {
    return this.#generation;
  }

  /** Offers a freshly verified identity; stored when there is room, or when the cache is full and its token was offered before. */
  set(identity: Identity, nowMs: number, generation = this.#generation): CacheEntry | undefined {
    if (generation !== this.#generation) return undefined;
    const expiresAtMs = Math.min(identity.claims.exp * 1000, nowMs + this.#maxTtlMs);
    if (expiresAtMs <= nowMs) return undefined;
    const key = keyOf(identity.token);
    if (this.#lru.size >= this.#max && !this.#lru.has(key)) {
      const seen = this.#hash(key);
      const slot = seen & this.#mask;
      if (this.#doorkeeper[slot] !== seen) {
        this.#doorkeeper[slot] = seen;
        return undefined;
      }
      this.#doorkeeper[slot] = 0;
    }
    const entry: CacheEntry = { identity, expiresAtMs, key, promise: undefined };
    this.#lru.set(key, entry);
    return entry;
  }

  clear(): void {
    this.#generation++;
    this.#lru.clear();
    this.#doorkeeper.fill(0);
    for (const slot of this.#front) {
      slot.header = '';
      slot.entry = undefined;
    }
  }
}
