/**
 * Options of the role-policy cache: their documentation, defaults and validation, owned here beside
 * the policy client that uses them (`createAuthorizer` only composes them).
 */
import type { OptionChecks } from '../lib/option-checks.js';
import { warnOnce } from '../lib/warn-once.js';

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
}

export const DEFAULT_POLICY: Readonly<Required<PolicyOptions>> = {
  ttlMs: 60_000,
  maxStaleMs: 300_000,
  minRefreshIntervalMs: 5_000,
  timeoutMs: 5_000,
  maxApplications: 100,
  maxBytes: 16_777_216,
};

/** Validates `policy` and fills in the defaults. Any combination of values is valid. */
export function resolvePolicyOptions(policy: PolicyOptions | undefined, checks: OptionChecks): Required<PolicyOptions> {
  if (policy === undefined) return { ...DEFAULT_POLICY };
  const { positiveInt, nonNegativeInt, onlyKnown } = checks;
  onlyKnown('policy', policy, Object.keys(DEFAULT_POLICY));
  const resolved = {
    ttlMs: positiveInt('policy.ttlMs', policy.ttlMs, DEFAULT_POLICY.ttlMs),
    maxStaleMs: nonNegativeInt('policy.maxStaleMs', policy.maxStaleMs, DEFAULT_POLICY.maxStaleMs),
    minRefreshIntervalMs: nonNegativeInt('policy.minRefreshIntervalMs', policy.minRefreshIntervalMs, DEFAULT_POLICY.minRefreshIntervalMs),
    timeoutMs: positiveInt('policy.timeoutMs', policy.timeoutMs, DEFAULT_POLICY.timeoutMs),
    maxApplications: positiveInt('policy.maxApplications', policy.maxApplications, DEFAULT_POLICY.maxApplications),
    maxBytes: positiveInt('policy.maxBytes', policy.maxBytes, DEFAULT_POLICY.maxBytes),
  };
  if (resolved.ttlMs < resolved.minRefreshIntervalMs) {
    warnOnce('IAM_AUTHZ_POLICY_TTL_BELOW_MIN_REFRESH', `createAuthorizer: "policy.ttlMs" (${resolved.ttlMs} ms) is shorter than "policy.minRefreshIntervalMs" (${resolved.minRefreshIntervalMs} ms): a policy is not revalidated more often than every ${resolved.minRefreshIntervalMs} ms`);
  }
  return resolved;
}
