/**
 * Verified-token cache: a bounded LRU of verified tokens. An entry lives until
 * `min(exp, verifiedAt + maxTtlMs)` and is checked against the clock on every hit, so it is never
 * served after the token's `exp`.
 *
 * The LRU is keyed by the token's last {@link KEY_CHARS} characters (256 bits of its signature) and
 * a hit is confirmed by comparing the whole token string: hashing a fresh 700-character header
 * string costs about a microsecond, the compare a few nanoseconds. Only verified tokens are stored,
 * so a forged token sharing a suffix can at worst miss.
 */
import { LRUCache } from 'lru-cache';
import type { Identity } from '../types.js';

const KEY_CHARS = 43;

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
  #generation = 0;

  constructor(max: number, maxTtlMs: number) {
    this.#lru = new LRUCache<string, Entry>({ max });
    this.#maxTtlMs = maxTtlMs;
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

  set(identity: Identity, nowMs: number, generation = this.#generation): void {
    if (generation !== this.#generation) return;
    const expiresAtMs = Math.min(identity.claims.exp * 1000, nowMs + this.#maxTtlMs);
    if (expiresAtMs > nowMs) this.#lru.set(keyOf(identity.token), { identity, expiresAtMs });
  }

  clear(): void {
    this.#generation++;
    this.#lru.clear();
  }
}
