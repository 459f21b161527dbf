/**
 * Options of the remote JWKS cache: their documentation, defaults and validation, owned here beside
 * the key set that uses them (`createAuthorizer` only composes them).
 */
import type { OptionChecks } from '../lib/option-checks.js';
import { warnOnce } from '../lib/warn-once.js';

/** Tuning of the remote JWKS cache. */
export interface JwksOptions {
  /** Keys are fresh this long (ms) after a successful fetch; after that they are refreshed in the background. Default `600_000` (10 min). */
  cacheMaxAgeMs?: number;
  /** Least time (ms) between two fetches: bounds refetches for unknown `kid`s and retries after a failure. Default `5_000`. */
  cooldownMs?: number;
  /** Total time (ms) for one JWKS fetch: connect, headers and body. Default `5_000`. */
  timeoutMs?: number;
  /**
   * While the endpoint fails, cached keys keep verifying for this long (ms) after they stopped being
   * fresh — i.e. until `cacheMaxAgeMs + maxStaleMs` after the last success (RFC 5861 stale-if-error).
   * Default `3_600_000` (1 h).
   */
  maxStaleMs?: number;
  /** Largest JWKS body accepted, in bytes. Default `65_536`. */
  maxBytes?: number;
}

export const DEFAULT_JWKS: Readonly<Required<JwksOptions>> = {
  cacheMaxAgeMs: 600_000,
  cooldownMs: 5_000,
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
    cacheMaxAgeMs: positiveInt('jwks.cacheMaxAgeMs', jwks.cacheMaxAgeMs, DEFAULT_JWKS.cacheMaxAgeMs),
    cooldownMs: nonNegativeInt('jwks.cooldownMs', jwks.cooldownMs, DEFAULT_JWKS.cooldownMs),
    timeoutMs: positiveInt('jwks.timeoutMs', jwks.timeoutMs, DEFAULT_JWKS.timeoutMs),
    maxStaleMs: nonNegativeInt('jwks.maxStaleMs', jwks.maxStaleMs, DEFAULT_JWKS.maxStaleMs),
    maxBytes: positiveInt('jwks.maxBytes', jwks.maxBytes, DEFAULT_JWKS.maxBytes),
  };
  if (resolved.cacheMaxAgeMs < resolved.cooldownMs) {
    warnOnce('IAM_AUTHZ_JWKS_MAX_AGE_BELOW_COOLDOWN', `createAuthorizer: "jwks.cacheMaxAgeMs" (${resolved.cacheMaxAgeMs} ms) is shorter than "jwks.cooldownMs" (${resolved.cooldownMs} ms): keys are not refreshed more often than the cooldown allows`);
  }
  return resolved;
}
