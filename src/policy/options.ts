/**
 * Options of the role-policy cache: their documentation, defaults and validation, owned here beside
 * the policy client that uses them (`createAuthorizer` only composes them).
 */
import type { OptionChecks } from '../lib/option-checks.js';
import { warnOnce } from '../lib/warn-once.js';
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
  /** Least time (ms) between two fetches of one application's policy that are not needed to answer: revalidation, refetch after a denial, retry after a failure. Default `5_000`. */
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

export const DEFAULT_POLICY: Readonly<Required<Omit<PolicyOptions, 'hints'>>> = {
  ttlMs: 60_000,
  maxStaleMs: 300_000,
  minRefreshIntervalMs: 5_000,
  timeoutMs: 5_000,
  maxApplications: 100,
  maxBytes: 16_777_216,
};

/** Validates `policy` and fills in the defaults. Any combination of values is valid. */
export function resolvePolicyOptions(policy: PolicyOptions | undefined, checks: OptionChecks): ResolvedPolicyOptions {
  if (policy === undefined) return { ...DEFAULT_POLICY, hints: undefined };
  const { positiveInt, nonNegativeInt, onlyKnown } = checks;
  onlyKnown('policy', policy, [...Object.keys(DEFAULT_POLICY), 'hints']);
  const resolved = {
    ttlMs: positiveInt('policy.ttlMs', policy.ttlMs, DEFAULT_POLICY.ttlMs),
    maxStaleMs: nonNegativeInt('policy.maxStaleMs', policy.maxStaleMs, DEFAULT_POLICY.maxStaleMs),
    minRefreshIntervalMs: nonNegativeInt('policy.minRefreshIntervalMs', policy.minRefreshIntervalMs, DEFAULT_POLICY.minRefreshIntervalMs),
    timeoutMs: positiveInt('policy.timeoutMs', policy.timeoutMs, DEFAULT_POLICY.timeoutMs),
    maxApplications: positiveInt('policy.maxApplications', policy.maxApplications, DEFAULT_POLICY.maxApplications),
    maxBytes: positiveInt('policy.maxBytes', policy.maxBytes, DEFAULT_POLICY.maxBytes),
    hints: hintChannel(policy.hints, checks),
  };
  if (resolved.ttlMs < resolved.minRefreshIntervalMs) {
    warnOnce('IAM_AUTHZ_POLICY_TTL_BELOW_MIN_REFRESH', `createAuthorizer: "policy.ttlMs" (${resolved.ttlMs} ms) is shorter than "policy.minRefreshIntervalMs" (${resolved.minRefreshIntervalMs} ms): a policy is not revalidated more often than every ${resolved.minRefreshIntervalMs} ms`);
  }
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
