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

interface Entry {
  identity: Identity;
  expiresAtMs: number;
}

export class TokenCache {
  readonly #lru: LRUCache<string, Entry>;
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
    this.#lru = new LRUCache<string, Entry>({ max });
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
    const key = keyOf(token);
    const entry = this.#lru.get(key);
    if (entry?.identity.token !== token) return undefined;
    if (entry.expiresAtMs > nowMs) return entry.identity;
    this.#lru.delete(key);
    return undefined;
  }

  /** Changes on every `clear()`: a verification started before a clear must not be stored after it. */
  get generation(): number {
    return this.#generation;
  }

  /** Offers a freshly verified identity; stored when there is room, or when the cache is full and its token was offered before. */
  set(identity: Identity, nowMs: number, generation = this.#generation): void {
    if (generation !== this.#generation) return;
    const expiresAtMs = Math.min(identity.claims.exp * 1000, nowMs + this.#maxTtlMs);
    if (expiresAtMs <= nowMs) return;
    const key = keyOf(identity.token);
    if (this.#lru.size >= this.#max && !this.#lru.has(key)) {
      const seen = this.#hash(key);
      const slot = seen & this.#mask;
      if (this.#doorkeeper[slot] !== seen) {
        this.#doorkeeper[slot] = seen;
        return;
      }
      this.#doorkeeper[slot] = 0;
    }
    this.#lru.set(key, { identity, expiresAtMs });
  }

  clear(): void {
    this.#generation++;
    this.#lru.clear();
    this.#doorkeeper.fill(0);
  }
}
