/**
 * Verified-token cache: a bounded LRU keyed by the exact token string. An entry lives until
 * `min(exp, verifiedAt + maxTtlMs)` and is checked against the clock on every hit, so it is never
 * served after the token's `exp`.
 */
import { LRUCache } from 'lru-cache';
import type { Identity } from '../types.js';

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
    const entry = this.#lru.get(token);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs > nowMs) return entry.identity;
    this.#lru.delete(token);
    return undefined;
  }

  /** Changes on every `clear()`: a verification started before a clear must not be stored after it. */
  get generation(): number {
    return this.#generation;
  }

  set(identity: Identity, nowMs: number, generation = this.#generation): void {
    if (generation !== this.#generation) return;
    const expiresAtMs = Math.min(identity.claims.exp * 1000, nowMs + this.#maxTtlMs);
    if (expiresAtMs > nowMs) this.#lru.set(identity.token, { identity, expiresAtMs });
  }

  clear(): void {
    this.#generation++;
    this.#lru.clear();
  }
}
