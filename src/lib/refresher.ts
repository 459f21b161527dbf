/**
 * The freshness of one cached copy of a remote thing (an issuer's signing keys, an application's
 * policy): the one state machine behind every remote thing the library caches. Its promises are the
 * table "Freshness: what each option promises" of docs/caching-and-outages.md, and
 * test/property/freshness.property.test.ts holds them against a model over random options.
 *
 * States: `cold` (nothing usable), `fresh` (its refresh not yet due), `stale` (due, no failure),
 * `failing` (the last fetch failed; the copy is still served). Events: a fetch starts — `needed`
 * (nothing usable: the caller cannot be answered without it), `wanted` (the copy lacks what the
 * caller needs: an unknown key id) or `optional` (a refresh that is due, a refetch after a denial or
 * for a hint) — and ends: succeeded (a new copy, or the held one confirmed), failed (with a
 * `Retry-After`, perhaps), or forgotten (it said nothing about the upstream).
 *
 * - **Stale bound**: a copy is served until `ttlMs + maxStaleMs` after its last success, never
 *   longer, whatever else is set.
 * - **Needed fetches** are never held back by `minRefreshIntervalMs`: with no failure since the
 *   last success they start at once. After failures they wait the cold backoff: the first retry
 *   within `minRefreshIntervalMs` of the failure (drawn in its second half: jitter only ever
 *   shortens a wait), later ones from `max(minRefreshIntervalMs, 1 s)` doubling, at most
 *   `min(30 s, max(ttlMs, 8 × that))` — an upstream that fails is not asked by every request.
 * - **Spacing**: `wanted` and `optional` fetches start at least `minRefreshIntervalMs` after the
 *   previous fetch started, whatever the traffic.
 * - **Due point**: a refresh becomes due at a random point of `[max(M, f × ttlMs), max(M, ttlMs)]`
 *   after a success (`M` = `minRefreshIntervalMs`, `f` 0.8, or 0.1 for the first one after start),
 *   so replicas started together drift apart; never past the stale bound.
 * - **While a copy is served after failures**, `optional` retries back off from
 *   `max(M, 0.8 × ttlMs)` (a failing replica never asks more often than a healthy one), doubling
 *   with jitter up to 5 min, the last one when the copy stops being served; `wanted` ones wait the
 *   cold backoff, so a new key is had soon after the upstream is back.
 * - A `Retry-After` (429, 503) is a floor for every retry, capped at `ttlMs + maxStaleMs`.
 *
 * Refreshes are driven by traffic, not timers: the first request that finds the copy due starts
 * the fetch (and, where no background work is allowed, waits for it). Nothing is scheduled, so
 * nothing keeps a process alive or runs after a Workers request has answered; jitter is drawn
 * when a fetch ends, never at construction.
 */
import { abandoned, joinShared } from './transport.js';

/** Where a cached copy stands: see {@link Refresher.state}. */
export type RefreshState = 'cold' | 'fresh' | 'stale' | 'failing';

/**
 * Why a fetch starts: `needed` (nothing usable is held), `wanted` (the copy held lacks what the
 * caller needs) or `optional` (a refresh, a refetch after a denial, a hint).
 */
export type FetchKind = 'needed' | 'wanted' | 'optional';

export interface RefresherConfig {
  /** Freshness of a fetched copy (ms). */
  ttlMs: number;
  /** Least time (ms) between the starts of two fetches that are not needed (see {@link FetchKind}). */
  minRefreshIntervalMs: number;
  /** How long (ms) past `ttlMs` a copy is served while the upstream fails. */
  maxStaleMs: number;
  /** One fetch's timeout (ms): bounds the wait on a fetch another (possibly cancelled) request runs. */
  timeoutMs: number;
  now: () => number;
  /** Uniform in [0, 1); injectable so that tests draw reproducible fleets. Default `Math.random`. */
  random?: (() => number) | undefined;
}

/** Share of the freshness within which a refresh becomes due: uniformly in (0.8, 1] × `ttlMs`. */
export const JITTER_FROM = 0.8;
/** The first refresh after start is spread over (0.1, 1] × `ttlMs`. */
export const FIRST_JITTER_FROM = 0.1;
/**
 * The floor of the cold backoff from the second retry after a failure on: with a short (or 0)
 * `minRefreshIntervalMs`, an upstream that keeps failing is still not asked by every request.
 */
export const MIN_BACKOFF_MS = 1_000;
/** Longest backoff between retries while a usable copy is served. */
export const MAX_BACKOFF_MS = 600_000;
/** Longest backoff while nothing usable is held: callers get 503 meanwhile, so recover sooner. */
export const MAX_COLD_BACKOFF_MS = 30_000;
/** Longest random wait before a refetch for an unknown key id. */
export const MAX_UNKNOWN_KID_DELAY_MS = 1_000;

export interface RefresherStatus {
  state: RefreshState;
  /** Age (ms) of the cached copy; `null` when cold. */
  ageMs: number | null;
  /** When (epoch ms) the next fetch may start or is due; `null` when a fetch is running. */
  nextRefreshAt: number | null;
  consecutiveFailures: number;
  /** Current wait (ms) before the next retry after failures; 0 when not failing. */
  backoffMs: number;
}

/** What {@link Refresher.forgetAttempt} restores, read before {@link Refresher.start}. */
export interface AttemptMark {
  readonly lastAttemptAt: number | undefined;
}

export class Refresher<T> {
  readonly #config: RefresherConfig;
  readonly #random: () => number;
  #value: T | undefined;
  /** When the last fetch that succeeded ended. */
  #fetchedAt: number | undefined;
  /** When a refresh becomes due (jittered). */
  #dueAt = 0;
  /** When the last fetch started: the spacing counts from it. */
  #lastAttemptAt: number | undefined;
  #failures = 0;
  /** Failures in a row with nothing usable held: the cold backoff's count. */
  #coldFailures = 0;
  /** After failures, no `optional` fetch before this (the served copy's backoff). */
  #servedRetryAt = 0;
  /** After failures, no `needed` or `wanted` fetch before this (the cold backoff). */
  #coldRetryAt = 0;
  #backoffMs = 0;
  #inflight: Promise<unknown> | undefined;
  /** Fetches started so far, and the one running (0: none): tells the running one from an ended one. */
  #seq = 0;
  #running = 0;
  /** The error of the last failed fetch; cleared by a success. */
  lastError: Error | undefined;

  constructor(config: RefresherConfig) {
    this.#config = config;
    this.#random = config.random ?? (() => Math.random());
  }

  get value(): T | undefined {
    return this.#value;
  }

  /** The cached copy while it may be used: at most `ttlMs + maxStaleMs` after its last success. */
  usable(): T | undefined {
    const { ttlMs, maxStaleMs, now } = this.#config;
    return this.#fetchedAt !== undefined && now() - this.#fetchedAt <= ttlMs + maxStaleMs ? this.#value : undefined;
  }

  /** The cached copy while no refresh is due (no promise needed to use it); the due point is within the stale bound. */
  current(): T | undefined {
    return this.#fetchedAt !== undefined && this.#config.now() < this.#dueAt ? this.#value : undefined;
  }

  /** Age (ms) of the copy; `undefined` when cold. */
  ageMs(): number | undefined {
    return this.#fetchedAt === undefined ? undefined : this.#config.now() - this.#fetchedAt;
  }

  /**
   * True when a copy was fetched, its refresh is due, and a fetch runs or may start (also when it
   * is no longer usable: a token cache hit still refreshes the keys that verified it).
   */
  refreshDue(): boolean {
    return this.#fetchedAt !== undefined && this.#config.now() >= this.#dueAt && (this.running() || this.mayStart('optional'));
  }

  /** True while a fetch runs (one another request started and workerd cancelled counts no more). */
  running(): boolean {
    if (this.#inflight && abandoned(this.#lastAttemptAt, this.#config.now(), this.#config.timeoutMs)) this.#inflight = undefined;
    return this.#inflight !== undefined;
  }

  /** True when a fetch of this kind may start now (see {@link FetchKind} and the rules above). */
  mayStart(kind: FetchKind): boolean {
    const now = this.#config.now();
    if (kind === 'needed') return this.#failures === 0 || now >= this.#coldRetryAt;
    if (this.#lastAttemptAt !== undefined && now < this.#lastAttemptAt + this.#config.minRefreshIntervalMs) return false;
    return this.#failures === 0 || now >= (kind === 'wanted' ? this.#coldRetryAt : this.#servedRetryAt);
  }

  /**
   * The fetch to wait for: the one running, else `fetch()` started now when {@link mayStart}
   * allows; `undefined` when neither. At most one runs at a time.
   */
  start<O>(fetch: () => Promise<O>, kind: FetchKind): Promise<O> | undefined {
    if (this.running()) return this.#inflight as Promise<O>;
    if (!this.mayStart(kind)) return undefined;
    this.#lastAttemptAt = this.#config.now();
    const seq = ++this.#seq;
    this.#running = seq;
    const pending: Promise<O> = fetch().finally(() => {
      if (this.#running === seq) this.#ended();
    });
    // A fetch may record its outcome before returning its promise (nothing to wait for).
    if (this.#running === seq) this.#inflight = pending;
    return pending;
  }

  /** Waits for `shared` (bounded where a cancelled request may never settle it). */
  join<O>(shared: Promise<O>, fallback: O): Promise<O> {
    return joinShared(shared, this.#config.timeoutMs, fallback);
  }

  /** The upstream gave a new copy, or confirmed the one held: fresh again, next refresh jittered. */
  succeeded(value: T): void {
    const { now, ttlMs, maxStaleMs, minRefreshIntervalMs } = this.#config;
    const at = now();
    const from = this.#fetchedAt === undefined ? FIRST_JITTER_FROM : JITTER_FROM;
    this.#ended();
    this.#value = value;
    this.#fetchedAt = at;
    // Uniform over the window, its start moved up to the spacing if need be: clamping each draw to
    // the spacing instead would pile every draw below it onto one instant.
    const earliest = Math.max(minRefreshIntervalMs, from * ttlMs);
    const latest = Math.max(earliest, ttlMs);
    this.#dueAt = at + Math.min(ttlMs + maxStaleMs, Math.round(latest - (latest - earliest) * this.#random()));
    this.#failures = 0;
    this.#coldFailures = 0;
    this.#backoffMs = 0;
    this.lastError = undefined;
  }

  /**
   * The fetch failed: back off (see the rules above). Cold, the k-th retry waits `d × (1 - u/2)`
   * (u uniform in [0, 1): in [d/2, d]) with `d` = `minRefreshIntervalMs` for the first, then
   * `max(it, 1 s) × 2^(k-1)` up to the cold cap. Served, it waits `d × (1 + u)` with
   * `d = max(M, 0.8 × ttlMs) × 2^(n-1)` (at most 5 min), never past the end of the stale bound.
   * `retryAfterMs` (already capped at 10 min) is a floor for both, capped at `ttlMs + maxStaleMs`.
   */
  failed(error: Error, retryAfterMs?: number): void {
    const { now, minRefreshIntervalMs: m, ttlMs, maxStaleMs } = this.#config;
    this.#ended();
    this.#failures += 1;
    this.lastError = error;
    const at = now();
    const left = this.usable() === undefined ? 0 : (this.#fetchedAt ?? at) + ttlMs + maxStaleMs - at;
    if (left <= 0) this.#coldFailures += 1;
    const u = this.#random();
    const honour = (wait: number): number => (retryAfterMs === undefined ? wait : Math.max(wait, Math.min(retryAfterMs, ttlMs + maxStaleMs)));
    const k = Math.max(1, this.#coldFailures);
    const base = Math.max(m, MIN_BACKOFF_MS);
    const cold = k === 1 ? m : Math.max(m, Math.min(Math.min(MAX_COLD_BACKOFF_MS, Math.max(ttlMs, 8 * base)), base * 2 ** Math.min(k - 1, 30)));
    const coldWait = honour(Math.round(cold * (1 - u / 2)));
    this.#coldRetryAt = at + coldWait;
    if (left <= 0) {
      this.#backoffMs = coldWait;
      this.#servedRetryAt = this.#coldRetryAt;
      return;
    }
    const served = Math.min(MAX_BACKOFF_MS / 2, Math.max(m, Math.round(JITTER_FROM * ttlMs)) * 2 ** Math.min(this.#failures - 1, 30));
    const wait = honour(Math.min(left, Math.round(served * (1 + u))));
    this.#backoffMs = wait;
    this.#servedRetryAt = at + wait;
  }

  /**
   * Forgets the attempt that just ended without telling anything about the upstream (e.g. the
   * caller's own token was refused): the spacing is given back.
   */
  forgetAttempt(mark: AttemptMark): void {
    this.#ended();
    this.#lastAttemptAt = mark.lastAttemptAt;
  }

  /** What {@link forgetAttempt} needs, read before {@link start}. */
  attemptMark(): AttemptMark {
    return { lastAttemptAt: this.#lastAttemptAt };
  }

  /**
   * The running fetch has recorded its outcome: the next caller may start another at once (the
   * fetch's promise may settle a few ticks later, after its events were published).
   */
  #ended(): void {
    this.#inflight = undefined;
    this.#running = 0;
  }

  /** A short random wait (ms) before a refetch many replicas may want at once (an unknown `kid`). */
  spreadDelayMs(): number {
    return Math.floor(this.#random() * Math.min(MAX_UNKNOWN_KID_DELAY_MS, this.#config.minRefreshIntervalMs));
  }

  /**
   * `cold`: nothing usable; `failing`: the last fetch failed (a copy may still be served);
   * `stale`: older than `ttlMs`, no failure yet; `fresh`: otherwise.
   */
  state(): RefreshState {
    if (this.usable() === undefined) return 'cold';
    if (this.#failures > 0) return 'failing';
    return (this.ageMs() ?? 0) < this.#config.ttlMs ? 'fresh' : 'stale';
  }

  status(): RefresherStatus {
    const age = this.ageMs();
    const spaced = this.#lastAttemptAt === undefined ? 0 : this.#lastAttemptAt + this.#config.minRefreshIntervalMs;
    let next = Math.max(this.#dueAt, spaced);
    if (this.#failures > 0) next = this.usable() === undefined ? this.#coldRetryAt : Math.max(this.#servedRetryAt, spaced);
    return {
      state: this.state(),
      ageMs: age ?? null,
      nextRefreshAt: this.running() ? null : next,
      consecutiveFailures: this.#failures,
      backoffMs: this.#backoffMs,
    };
  }
}

/** Resolves after `ms` (at once for 0). */
export function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => { setTimeout(resolve, ms); });
}
