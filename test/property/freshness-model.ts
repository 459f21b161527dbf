/**
 * The reference model of the freshness promises (docs/caching-and-outages.md, "Freshness: what each
 * option promises"), for the property test of both caches. It knows only the options and what the
 * fake IAM saw (every fetch: when, whether it was answered, what it served), never the library's
 * state, and says of each answer whether a promise allows it:
 *
 * 1. stale bound: what is answered comes from the last successful fetch, at most
 *    `ttlMs + maxStaleMs` old, or from a fetch this request made;
 * 2. an outage is a 503, never a 401 or 403;
 * 3. a fetch needed to answer is never held back by the spacing: with the IAM up, an error needs a
 *    failed fetch in this request, or the cold backoff since the last failure (the first within
 *    `minRefreshIntervalMs`, later ones from `max(it, 1 s)` doubling, at most the cold cap; a
 *    `Retry-After` a floor);
 * 4. freshness after a change: with the IAM healthy, a copy `max(ttlMs, minRefreshIntervalMs)` old
 *    is not answered without the request starting a revalidation;
 * 5. the denial refetch (the policy): with the IAM healthy, a denial the IAM would grant needs the
 *    IAM to have said so to this request, or the last fetch to have started less than
 *    `minRefreshIntervalMs` ago (or a hint to confirm the copy); for the keys, an unknown key id the
 *    IAM has likewise;
 * 6. rate: a fetch while a usable copy is held starts at least `minRefreshIntervalMs` after the
 *    previous one;
 * 7. a hint naming another version than the one held, not yet answered by a fetch sent after it (or
 *    one that brought that version), makes a request start a revalidation once the spacing allows.
 */

/** The freshness options as the library resolves them. */
export interface Resolved {
  readonly ttlMs: number;
  readonly maxStaleMs: number;
  readonly minRefreshIntervalMs: number;
}

/** One fetch the fake IAM saw, at the fake clock's time. */
export interface Fetch {
  readonly at: number;
  readonly ok: boolean;
  /** What an answered fetch served (a policy version, a key set's version). */
  readonly version: number;
  /** A `Retry-After` the failure carried (ms), if any. */
  readonly retryAfterMs?: number | undefined;
}

/** The documented constants of the cold backoff. */
const MIN_BACKOFF_MS = 1_000;
const MAX_COLD_BACKOFF_MS = 30_000;

export class FreshnessModel {
  readonly fetches: Fetch[] = [];
  readonly #o: Resolved;
  /** The hint that waits for an answer: its version and the number of fetches when it came. */
  #pendingHint: { version: number; after: number } | undefined;
  /** The version the last hint named. */
  #lastHint: number | undefined;

  constructor(options: Resolved) {
    this.#o = options;
  }

  get #bound(): number {
    return this.#o.ttlMs + this.#o.maxStaleMs;
  }

  /** The last answered fetch among the first `n`. */
  lastOk(n = this.fetches.length): Fetch | undefined {
    for (let i = n - 1; i >= 0; i--) if (this.fetches[i]?.ok === true) return this.fetches[i];
    return undefined;
  }

  /** Records a fetch the IAM saw; an answered one sent after a pending hint (or bringing its version) answers it. */
  record(fetch: Fetch): void {
    this.fetches.push(fetch);
    const pending = this.#pendingHint;
    if (pending !== undefined && fetch.ok && (this.fetches.length - 1 >= pending.after || fetch.version === pending.version)) this.#pendingHint = undefined;
  }

  /** A hint naming `version` arrived, the copy held being `held` (`undefined`: nothing cached, ignored). */
  hint(version: number, held: number | undefined): void {
    if (held === undefined) return;
    this.#lastHint = version;
    if (version !== held) this.#pendingHint = { version, after: this.fetches.length };
  }

  /** The version of the copy a request starting now may hold (the last answered fetch), if usable at `at`. */
  held(): number | undefined {
    return this.lastOk()?.version;
  }

  /**
   * The promises broken by an answer to a request made at `at`, when the IAM saw `before` fetches
   * before it and `this.fetches.length` after it (those between were made by it). `answer` is the
   * version answered, or an error's status. `current` is the IAM's version at `at`, `up` whether it
   * answers, `wouldGrant` (the policy) or `known` (the keys) whether the IAM would let the request
   * through where the answer did not.
   */
  violations(q: {
    at: number;
    before: number;
    answer: { version: number } | { status: number } | { unknown: true };
    current: number;
    up: boolean;
    /** A denial (or, for the keys, an unknown key id) that the IAM's current version would not give. */
    refusedWhatIamGives: boolean;
    /** When the request came: the hint channel confirmed the copy (a denial may then skip its refetch). */
    hintConfirms?: boolean;
    /** When the request came: a hint waited for an answer ({@link hintPending}). */
    hintPending?: boolean;
  }): string[] {
    const { at, before, answer } = q;
    const { ttlMs, minRefreshIntervalMs: m } = this.#o;
    const out: string[] = [];
    const last = this.lastOk(before);
    const mine = this.fetches.slice(before);
    const failedSince = this.fetches.slice(last === undefined ? 0 : this.fetches.indexOf(last) + 1, before).filter((f) => !f.ok);
    const usable = last !== undefined && at - last.at <= this.#bound;
    const fetchedNow = mine.length > 0;

    // 1. Stale bound.
    if ('version' in answer) {
      const fromLast = usable && last.version === answer.version;
      const fromMine = mine.some((f) => f.ok && f.version === answer.version);
      if (!fromLast && !fromMine) out.push(`stale bound: answered version ${answer.version}, last success ${last ? `${at - last.at} ms ago (version ${last.version})` : 'none'}, bound ${this.#bound} ms`);
    }
    // 2. An outage is a 503.
    if ('status' in answer && answer.status !== 503) out.push(`an error ${answer.status}, not 503`);
    // 3. A needed fetch is never held back by the spacing.
    if ('status' in answer && q.up && !mine.some((f) => !f.ok)) {
      const lastFailure = failedSince.at(-1);
      if (lastFailure === undefined) out.push('503 with the IAM up and no failure since the last success: a needed fetch was held back');
      else if (at >= lastFailure.at + this.#coldBound(failedSince, last)) out.push(`503 with the IAM up ${at - lastFailure.at} ms after the last failure, past the cold backoff (${this.#coldBound(failedSince, last)} ms)`);
    }
    const healthy = failedSince.length === 0 && !mine.some((f) => !f.ok);
    // 4. Freshness after a change.
    if ('version' in answer && answer.version !== q.current && healthy && last !== undefined && at >= last.at + Math.max(ttlMs, m) && !fetchedNow) {
      out.push(`an old version ${at - last.at} ms after the last fetch, past max(ttlMs, minRefreshIntervalMs) = ${Math.max(ttlMs, m)}, and no revalidation started`);
    }
    // 5. The refetch after a denial (or for an unknown key id).
    const lastStart = this.fetches[before - 1]?.at;
    const askedNow = 'version' in answer ? mine.some((f) => f.ok && f.version === answer.version) : mine.length > 0;
    if (q.refusedWhatIamGives && healthy && q.hintConfirms !== true && !askedNow && (lastStart === undefined || at >= lastStart + m)) {
      out.push(`refused what the IAM gives, ${lastStart === undefined ? 'never fetched' : `${at - lastStart} ms after the last fetch`} (spacing ${m} ms), without a refetch`);
    }
    // 6. Rate: fetches while a copy is usable are spaced.
    for (let i = Math.max(1, before); i < this.fetches.length; i++) {
      const f = this.fetches[i] as Fetch;
      const prev = this.fetches[i - 1] as Fetch;
      const held = this.lastOk(i);
      if (held !== undefined && f.at - held.at <= this.#bound && f.at - prev.at < m) out.push(`two fetches ${f.at - prev.at} ms apart with a usable copy (spacing ${m} ms)`);
    }
    // 7. A pending hint makes the request revalidate once the spacing allows.
    if (q.hintPending === true && usable && healthy && (lastStart === undefined || at >= lastStart + m) && !fetchedNow) {
      out.push('a hint waits for an answer, the spacing allows, and no revalidation started');
    }
    return out;
  }

  /** Whether a hint waits for an answer of the IAM. */
  hintPending(): boolean {
    return this.#pendingHint !== undefined;
  }

  /** Whether the last hint named the version held and none waits: a denial may skip its refetch. */
  hintConfirms(): boolean {
    return this.#pendingHint === undefined && this.#lastHint !== undefined && this.#lastHint === this.held();
  }

  /** Longest wait after the last of `failures` (the failures since the last success) before a needed fetch must be made. */
  #coldBound(failures: readonly Fetch[], last: Fetch | undefined): number {
    const m = this.#o.minRefreshIntervalMs;
    // Failures with nothing usable held count; a failure while a copy was served counts as the first.
    const k = Math.max(1, failures.filter((f) => last === undefined || f.at - last.at >= this.#bound).length);
    const base = Math.max(m, MIN_BACKOFF_MS);
    const d = k === 1 ? m : Math.max(m, Math.min(MAX_COLD_BACKOFF_MS, Math.max(this.#o.ttlMs, 8 * base), base * 2 ** (k - 1)));
    const retryAfter = failures.at(-1)?.retryAfterMs;
    return retryAfter === undefined ? d : Math.max(d, Math.min(retryAfter, this.#bound));
  }
}
