/**
 * Options of the remote JWKS cache: their documentation, defaults and validation, owned here beside
 * the key set that uses them (`createAuthorizer` only composes them).
 */
import type { OptionChecks } from '../lib/option-checks.js';
import { warnOnce } from '../lib/warn-once.js';

/** Tuning of the remote JWKS cache. */
export interface JwksOptions {
  /**
   * Keys are fresh this long (ms) after a successful fetch. They are refreshed in the background by
   * the first request after a random point in the last fifth of it (the first refresh after start:
   * anywhere in its last nine tenths), so that replicas do not all ask at once. Default `600_000` (10 min).
   */
  ttlMs?: number;
  /**
   * Least time (ms) between two fetches that are not needed to answer: bounds refetches for unknown
   * `kid`s (each preceded by a random delay of up to `min(1 s, minRefreshIntervalMs)`) and is where
   * the backoff after a failure starts while no usable key is held (at least 1 s; then it doubles,
   * with jitter, up to `ttlMs`, at most 30 s); while cached keys are served, retries start at
   * `0.8 × ttlMs` instead. Default `5_000`.
   */
  minRefreshIntervalMs?: number;
  /** Total time (ms) for one JWKS fetch: connect, headers and body. Default `5_000`. */
  timeoutMs?: number;
  /**
   * While the endpoint fails, cached keys keep verifying for this long (ms) after they stopped being
   * fresh — i.e. until `ttlMs + maxStaleMs` after the last success (RFC 5861 stale-if-error).
   * Default `3_600_000` (1 h).
   */
  maxStaleMs?: number;
  /** Largest JWKS body accepted, in bytes. Default `65_536`. */
  maxBytes?: number;
}

export const DEFAULT_JWKS: Readonly<Required<JwksOptions>> = {
  ttlMs: 600_000,
  minRefreshIntervalMs: 5_000,
  timeoutMs: 5_000,
  maxStaleMs: 3_600_000,
  maxBytes: 65_536,
};

/** Validates `jwks` (remote-cache tuning) and fills in the defaults. Any combination of values is valid. */
export function resolveJwksOptions(jwks: JwksOptions | undefined, checks: OptionChecks): Required<JwksOptions> {
  if (jwks === undefined) return { ...DEFAULT_JWKS };
  const { positiveInt, nonNegativeInt, onlyKnown, fail } = checks;
  if (typeof jwks !== 'object' || (jwks as unknown) === null || Array.isArray(jwks)) fail('"jwks" must be an object');
  // A JWK Set is not tuning: it has its own option, and a hint beats a bare "unknown option".
  if (Object.hasOwn(jwks, 'keys')) fail('unknown option "jwks.keys": give a local JWK Set as "localJwks" ("jwks" tunes the remote key cache)');
  onlyKnown('jwks', jwks, Object.keys(DEFAULT_JWKS));
  const resolved = {
    ttlMs: positiveInt('jwks.ttlMs', jwks.ttlMs, DEFAULT_JWKS.ttlMs),
    minRefreshIntervalMs: nonNegativeInt('jwks.minRefreshIntervalMs', jwks.minRefreshIntervalMs, DEFAULT_JWKS.minRefreshIntervalMs),
    timeoutMs: positiveInt('jwks.timeoutMs', jwks.timeoutMs, DEFAULT_JWKS.timeoutMs),
    maxStaleMs: nonNegativeInt('jwks.maxStaleMs', jwks.maxStaleMs, DEFAULT_JWKS.maxStaleMs),
    maxBytes: positiveInt('jwks.maxBytes', jwks.maxBytes, DEFAULT_JWKS.maxBytes),
  };
  if (resolved.ttlMs < resolved.minRefreshIntervalMs) {
    warnOnce('IAM_AUTHZ_JWKS_TTL_BELOW_MIN_REFRESH', `createAuthorizer: "jwks.ttlMs" (${resolved.ttlMs} ms) is shorter than "jwks.minRefreshIntervalMs" (${resolved.minRefreshIntervalMs} ms): keys are not refreshed more often than every ${resolved.minRefreshIntervalMs} ms`);
  }
  return resolved;
}
