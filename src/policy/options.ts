/**
 * Options of the role-policy cache: their documentation, defaults and validation, owned here beside
 * the policy client that uses them (`createAuthorizer` only composes them).
 */
import { warnFreshness } from '../lib/freshness-options.js';
import type { OptionChecks } from '../lib/option-checks.js';
import type { HintChannel } from './hints.js';

/** Tuning of the role-policy cache (one entry per application). */
export interface PolicyOptions {
  /** How long (ms) a fetched policy is fresh; after that it is served while one background revalidation runs. Default `60_000`. */
  ttlMs?: number;
  /**
   * While the policy API fails, a cached policy is served for this long (ms) after it stopped being
   * fresh — i.e. until `ttlMs + maxStaleMs` after its last successful fetch (RFC 5861
   * stale-if-error); then 503. Default `300_000` (5 min).
   */
  maxStaleMs?: number;
  /**
   * Least time (ms) between the starts of two fetches of one application's policy that are not
   * needed to answer: a revalidation, a refetch after a denial or for a hint, a retry while the
   * cached policy is served. A fetch needed to answer (nothing usable cached) is never held back
   * by it: with no failure since the last success it starts at once; after a failed one, the first
   * retry comes within `minRefreshIntervalMs` of the failure (0: on the next request), later ones
   * back off from `max(minRefreshIntervalMs, 1 s)` — a floor, warned about once when this is set
   * below 1 s — doubling, at most 30 s. Default: the smaller of `5_000` and `ttlMs`.
   */
  minRefreshIntervalMs?: number;
  /** Total time (ms) for one policy fetch: connect, headers and body. Default `5_000`. */
  timeoutMs?: number;
  /** Most applications whose policy is kept (LRU). Default `100`. */
  maxApplications?: number;
  /** Largest policy body accepted, in bytes. Default `16_777_216` (16 MiB: about 45,000 roles; a 10,000-role policy is 3.4 MiB). */
  maxBytes?: number;
  /**
   * A channel shared by the replicas of the service (e.g. `redisHints` from `iam-authz/redis`):
   * a replica that fetches a new `changeId` publishes `{ issuer, application, changeId }` once, and
   * replicas caching that application revalidate at once (one conditional request, within
   * `minRefreshIntervalMs`). A hint never carries a policy: a forged or replayed one can cause a
   * request, never a grant. While the channel is connected and the last hint for an application
   * named the `changeId` held, a denial does not refetch. Subscribed on first use, unsubscribed by
   * `close()`; while it is down, the TTL alone applies. Default: none.
   */
  hints?: HintChannel;
}

/** {@link PolicyOptions}, checked and with their defaults. */
export type ResolvedPolicyOptions = Required<Omit<PolicyOptions, 'hints'>> & { hints: HintChannel | undefined };

/** The defaults; `minRefreshIntervalMs` left unset is the smaller of this one and `ttlMs`. */
export const DEFAULT_POLICY: Readonly<Required<Omit<PolicyOptions, 'hints'>>> = {
  ttlMs: 60_000,
  maxStaleMs: 300_000,
  minRefreshIntervalMs: 5_000,
  timeoutMs: 5_000,
  maxApplications: 100,
  maxBytes: 16_777_216,
};

/**
 * Validates `policy` and fills in the defaults, which adapt to what is set: an unset
 * `minRefreshIntervalMs` is the smaller of 5 s and `ttlMs`. Any combination of values is valid;
 * the ones whose promises interact are warned about once (see {@link warnFreshness}).
 */
export function resolvePolicyOptions(policy: PolicyOptions | undefined, checks: OptionChecks): ResolvedPolicyOptions {
  const given = policy ?? {};
  const { positiveInt, nonNegativeInt, onlyKnown } = checks;
  if (policy !== undefined) onlyKnown('policy', policy, [...Object.keys(DEFAULT_POLICY), 'hints']);
  const ttlMs = positiveInt('policy.ttlMs', given.ttlMs, DEFAULT_POLICY.ttlMs);
  const resolved = {
    ttlMs,
    maxStaleMs: nonNegativeInt('policy.maxStaleMs', given.maxStaleMs, DEFAULT_POLICY.maxStaleMs),
    minRefreshIntervalMs: nonNegativeInt('policy.minRefreshIntervalMs', given.minRefreshIntervalMs, Math.min(DEFAULT_POLICY.minRefreshIntervalMs, ttlMs)),
    timeoutMs: positiveInt('policy.timeoutMs', given.timeoutMs, DEFAULT_POLICY.timeoutMs),
    maxApplications: positiveInt('policy.maxApplications', given.maxApplications, DEFAULT_POLICY.maxApplications),
    maxBytes: positiveInt('policy.maxBytes', given.maxBytes, DEFAULT_POLICY.maxBytes),
    hints: hintChannel(given.hints, checks),
  };
  warnFreshness('policy', given.minRefreshIntervalMs !== undefined, resolved);
  return resolved;
}

/** `policy.hints`: `undefined` (none), or an object with `publish` and `subscribe` functions. */
function hintChannel(value: unknown, checks: OptionChecks): HintChannel | undefined {
  if (value === undefined) return undefined;
  const channel = value as HintChannel | null;
  if (typeof channel !== 'object' || channel === null || typeof (channel.publish as unknown) !== 'function' || typeof (channel.subscribe as unknown) !== 'function') {
    return checks.fail('"policy.hints" must be a hint channel: an object with publish(hint) and subscribe(listener) functions (e.g. redisHints() from iam-authz/redis)');
  }
  return channel;
}
