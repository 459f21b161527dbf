/**
 * The one refreshing primitive behind every remote thing we cache (the signing keys of an issuer,
 * the role policy of an application): fresh / stale / failing / cold, one fetch in flight, a
 * cached copy served while the upstream fails but never longer than `ttlMs + maxStaleMs` after
 * its last success, and the timing rules a fleet of replicas needs:
 *
 * - a refresh becomes due at a random point in the last fifth of the freshness (the first one after
 *   start anywhere in the last nine tenths of it), so replicas started together drift apart; a
 *   window that would start before `minRefreshIntervalMs` is narrowed to start there, never piled
 *   onto it;
 * - fetches that are not needed to answer are spaced by `minRefreshIntervalMs` (the refetch budget);
 * - after a failure, retries back off exponentially with jitter, with a `Retry-After` honoured as
 *   a floor. While a cached copy is still served, the first retry comes no sooner than a healthy
 *   refresh would (an outage never raises the fleet's rate) and later ones grow from there, never
 *   past the moment the copy stops being served; with nothing usable they start near
 *   `minRefreshIntervalMs` (at least {@link MIN_BACKOFF_MS}) and are capped lower, to recover sooner
 *   — as does a fetch needed to answer (an unknown key id) while a copy is served.
 *
 * Refreshes are driven by traffic, not timers: the first request that finds the copy due starts
 * the fetch (and, where no background work is allowed, waits for it). Nothing is scheduled, so
 * nothing keeps a process alive or runs after a Workers request has answered; jitter is drawn
 * when a fetch ends, never at construction.
 */
import { abandoned, joinShared } from './transport.js';

/** Where a cached copy stands: see {@link Refresher.state}. */
export type RefreshState = 'cold' | 'fresh' | 'stale' | 'failing';

export interface RefresherConfig {
  /** Freshness of a fetched copy (ms). */
  ttlMs: number;
  /** Least time (ms) between two fetches that are not needed to answer. */
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
 * Shortest first backoff after a failure, whatever `minRefreshIntervalMs` is (also 0): an upstream
 * that fails is never asked again by every request.
 */
export const MIN_BACKOFF_MS = 1_000;
/** Longest backoff between retries while a usable copy is served. */
export const MAX_BACKOFF_MS = 600_000;
/** Longest backoff while nothing usable is held: callers get 503 meanwhile, so recover sooner. */
export const MAX_COLD_BACKOFF_MS = 30_000;
/** Longest `Retry-After` honoured. */
export const MAX_RETRY_AFTER_MS = 600_000;
/** Longest random wait before a refetch for an unknown key id. */
export const MAX_UNKNOWN_KID_DELAY_MS = 1_000;

/**
 * Milliseconds to wait that a `Retry-After` value asks for (RFC 9110 §10.2.3: delay-seconds or an
 * HTTP-date), capped at {@link MAX_RETRY_AFTER_MS}; `undefined` when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else if (/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - nowMs);
  } else return undefined;
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

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

export class Refresher<T> {
  readonly #config: RefresherConfig;
  readonly #random: () => number;
  #value: T | undefined;
  #fetchedAt: number | undefined;
  /** When a refresh becomes due (jittered). */
  #dueAt = 0;
  /** No fetch that is not needed to answer starts before this (budget or backoff). */
  #notBefore = 0;
  /** After failures, no fetch needed to answer starts before this (the backoff a cold copy would have). */
  #neededNotBefore = 0;
  #lastAttemptAt: number | undefined;
  #failures = 0;
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

  /** The cached copy while it may be used: at most `ttlMs + maxStaleMs` old. */
  usable(): T | undefined {
    const { ttlMs, maxStaleMs, now } = this.#config;
    return this.#fetchedAt !== undefined && now() - this.#fetchedAt <= ttlMs + maxStaleMs ? this.#value : undefined;
  }

  /** The cached copy while no refresh is due (no promise needed to use it). */
  current(): T | undefined {
    return this.#fetchedAt !== undefined && this.#config.now() < this.#dueAt ? this.#value : undefined;
  }

  /** Age (ms) of the copy; `undefined` when cold. */
  ageMs(): number | undefined {
    return this.#fetchedAt === undefined ? undefined : this.#config.now() - this.#fetchedAt;
  }

  /** True when a copy is held, its refresh is due, and a fetch runs or may start. */
  refreshDue(): boolean {
    return this.#fetchedAt !== undefined && this.#config.now() >= this.#dueAt && (this.running() || this.mayStart(false));
  }

  /** True while a fetch runs (one another request started and workerd cancelled counts no more). */
  running(): boolean {
    if (this.#inflight && abandoned(this.#lastAttemptAt, this.#config.now(), this.#config.timeoutMs)) this.#inflight = undefined;
    return this.#inflight !== undefined;
  }

  /**
   * True when a new fetch may start now. `urgent` (a caller that cannot answer without one, before
   * any failure) skips the spacing; a backoff after a failure is never skipped. `needed` (a caller
   * that cannot answer without a fetch, e.g. for an unknown key id; implied by `urgent`) waits,
   * after failures, the shorter backoff of a cache with nothing usable rather than the served
   * copy's: a replica that missed a key while backing off gets it soon after the upstream is back.
   */
  mayStart(urgent: boolean, needed = urgent): boolean {
    if (urgent && this.#failures === 0) return true;
    const now = this.#config.now();
    return now >= this.#notBefore || (needed && this.#failures > 0 && now >= this.#neededNotBefore);
  }

  /**
   * The fetch to wait for: the one running, else `fetch()` started now when {@link mayStart}
   * allows; `undefined` when neither. At most one runs at a time.
   */
  start<O>(fetch: () => Promise<O>, urgent: boolean, needed = urgent): Promise<O> | undefined {
    if (this.running()) return this.#inflight as Promise<O>;
    if (!this.mayStart(urgent, needed)) return undefined;
    const now = this.#config.now();
    this.#lastAttemptAt = now;
    this.#notBefore = Math.max(this.#notBefore, now + this.#config.minRefreshIntervalMs);
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
    const { now, ttlMs, minRefreshIntervalMs } = this.#config;
    const at = now();
    const from = this.#fetchedAt === undefined ? FIRST_JITTER_FROM : JITTER_FROM;
    this.#ended();
    this.#value = value;
    this.#fetchedAt = at;
    // Uniform over the window, its start moved up to the budget if need be: clamping each draw to
    // the budget instead would pile every draw below it onto one instant (a burst one budget after start).
    const earliest = Math.max(minRefreshIntervalMs, from * ttlMs);
    const latest = Math.max(earliest, ttlMs);
    this.#dueAt = at + Math.round(latest - (latest - earliest) * this.#random());
    this.#failures = 0;
    this.#backoffMs = 0;
    this.#notBefore = (this.#lastAttemptAt ?? at) + minRefreshIntervalMs;
    this.lastError = undefined;
  }

  /**
   * The fetch failed: back off. The n-th retry waits `d × (1 + u)` (u uniform in [0, 1)), where
   * `d = b · 2^(n-1)`: the first between b and 2b, the third at least twice the first.
   *
   * - A copy still served: `b` is the shortest healthy refresh interval (`0.8 × ttlMs`, at least
   *   the budget and {@link MIN_BACKOFF_MS}), so a failing replica never asks more often than a
   *   healthy one; `d` at most {@link MAX_BACKOFF_MS} / 2, and the retry never later than the copy
   *   can be served (`ttlMs + maxStaleMs` after its last success).
   * - Nothing usable (callers get 503): `b` is the budget (at least {@link MIN_BACKOFF_MS}), `d` at
   *   most half of `ttlMs` (but of at least 8 b, at most 30 s), so service resumes soon after the
   *   upstream does.
   *
   * A fetch needed to answer (see {@link mayStart}) waits the second rule even while a copy is
   * served. A `Retry-After` (ms, already capped at 10 min) is a floor for both, but no longer than a
   * copy could still be served (`ttlMs + maxStaleMs`).
   */
  failed(error: Error, retryAfterMs?: number): void {
    const { now, minRefreshIntervalMs, ttlMs, maxStaleMs } = this.#config;
    this.#ended();
    this.#failures += 1;
    this.lastError = error;
    const at = now();
    const floor = Math.max(minRefreshIntervalMs, MIN_BACKOFF_MS);
    // A copy served at least until the earliest retry; one about to run out counts as none.
    const left = this.usable() === undefined ? 0 : (this.#fetchedAt ?? at) + ttlMs + maxStaleMs - at;
    const serving = left >= floor;
    const u = this.#random();
    const backoff = (base: number, cap: number): number => Math.max(floor, Math.round(Math.min(cap / 2, base * 2 ** Math.min(this.#failures - 1, 30)) * (1 + u)));
    // Never later than a copy can still be served (plus one budget): past that, waiting helps nobody.
    const honour = (wait: number): number => (retryAfterMs === undefined ? wait : Math.max(wait, Math.min(retryAfterMs, ttlMs + maxStaleMs)));
    // Cold: room for three doublings even with a short TTL, so the backoff visibly grows.
    const needed = honour(backoff(floor, Math.min(MAX_COLD_BACKOFF_MS, Math.max(ttlMs, 8 * floor))));
    // While serving, the last retry comes before the copy runs out: past that, callers would get 503.
    const wait = serving ? honour(Math.min(left, backoff(Math.max(floor, Math.round(JITTER_FROM * ttlMs)), MAX_BACKOFF_MS))) : needed;
    this.#backoffMs = wait;
    this.#notBefore = at + wait;
    this.#neededNotBefore = at + needed;
  }

  /**
   * Forgets the attempt that just ended without telling anything about the upstream (e.g. the
   * caller's own token was refused): the budget is given back.
   */
  forgetAttempt(previousAttemptAt: number | undefined, previousNotBefore: number): void {
    this.#ended();
    this.#lastAttemptAt = previousAttemptAt;
    this.#notBefore = previousNotBefore;
  }

  /**
   * The running fetch has recorded its outcome: the next caller may start another at once (the
   * fetch's promise may settle a few ticks later, after its events were published).
   */
  #ended(): void {
    this.#inflight = undefined;
    this.#running = 0;
  }

  /** What {@link forgetAttempt} needs, read before {@link start}. */
  attemptMark(): { lastAttemptAt: number | undefined; notBefore: number } {
    return { lastAttemptAt: this.#lastAttemptAt, notBefore: this.#notBefore };
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
    const next = this.#failures > 0 || this.#fetchedAt === undefined ? this.#notBefore : Math.max(this.#dueAt, this.#notBefore);
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

/**
 * The `Retry-After` a failed upstream answer carried, as milliseconds to wait: only on 429 and 503,
 * where RFC 9110 gives it that meaning.
 */
export function retryAfterMs(error: { statusCode?: number | undefined; retryAfter?: string | undefined }, nowMs: number): number | undefined {
  if (error.statusCode !== 429 && error.statusCode !== 503) return undefined;
  return parseRetryAfter(error.retryAfter, nowMs);
}
