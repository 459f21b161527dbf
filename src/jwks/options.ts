/**
 * Options of the remote JWKS cache: their documentation, defaults and validation, owned here beside
 * the key set that uses them (`createAuthorizer` only composes them).
 */
import { warnFreshness } from '../lib/freshness-options.js';
import type { OptionChecks } from '../lib/option-checks.js';

/** Tuning of the remote JWKS cache. */
export interface JwksOptions {
  /**
   * Keys are fresh this long (ms) after a successful fetch. They are refreshed in the background by
   * the first request after a random point in the last fifth of it (the first refresh after start:
   * anywhere in its last nine tenths), so that replicas do not all ask at once. Default `600_000` (10 min).
   */
  ttlMs?: number;
  /**
   * Least time (ms) between the starts of two fetches that are not needed to answer: a background
   * refresh, a refetch for an unknown `kid` (each preceded by a random delay of up to
   * `min(1 s, minRefreshIntervalMs)`), a retry while cached keys are served (those start at
   * `0.8 × ttlMs`). A fetch needed to answer (no usable key held) is never held back by it: with no
   * failure since the last success it starts at once; after a failed one, the first retry comes
   * within `minRefreshIntervalMs` of the failure (0: on the next request), later ones back off from
   * `max(minRefreshIntervalMs, 1 s)` — a floor, warned about once when this is set below 1 s —
   * doubling, up to `ttlMs`, at most 30 s. Default: the smaller of `5_000` and `ttlMs`.
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

/** The defaults; `minRefreshIntervalMs` left unset is the smaller of this one and `ttlMs`. */
export const DEFAULT_JWKS: Readonly<Required<JwksOptions>> = {
  ttlMs: 600_000,
  minRefreshIntervalMs: 5_000,
  timeoutMs: 5_000,
  maxStaleMs: 3_600_000,
  maxBytes: 65_536,
};

/**
 * Validates `jwks` (remote-cache tuning) and fills in the defaults, which adapt to what is set: an
 * unset `minRefreshIntervalMs` is the smaller of 5 s and `ttlMs`. Any combination of values is
 * valid; the ones whose promises interact are warned about once (see {@link warnFreshness}).
 */
export function resolveJwksOptions(jwks: JwksOptions | undefined, checks: OptionChecks): Required<JwksOptions> {
  const { positiveInt, nonNegativeInt, onlyKnown, fail } = checks;
  if (jwks !== undefined) {
    if (typeof jwks !== 'object' || (jwks as unknown) === null || Array.isArray(jwks)) fail('"jwks" must be an object');
    // A JWK Set is not tuning: it has its own option, and a hint beats a bare "unknown option".
    if (Object.hasOwn(jwks, 'keys')) fail('unknown option "jwks.keys": give a local JWK Set as "localJwks" ("jwks" tunes the remote key cache)');
    onlyKnown('jwks', jwks, Object.keys(DEFAULT_JWKS));
  }
  const given = jwks ?? {};
  const ttlMs = positiveInt('jwks.ttlMs', given.ttlMs, DEFAULT_JWKS.ttlMs);
  const resolved = {
    ttlMs,
    minRefreshIntervalMs: nonNegativeInt('jwks.minRefreshIntervalMs', given.minRefreshIntervalMs, Math.min(DEFAULT_JWKS.minRefreshIntervalMs, ttlMs)),
    timeoutMs: positiveInt('jwks.timeoutMs', given.timeoutMs, DEFAULT_JWKS.timeoutMs),
    maxStaleMs: nonNegativeInt('jwks.maxStaleMs', given.maxStaleMs, DEFAULT_JWKS.maxStaleMs),
    maxBytes: positiveInt('jwks.maxBytes', given.maxBytes, DEFAULT_JWKS.maxBytes),
  };
  warnFreshness('jwks', given.minRefreshIntervalMs !== undefined, resolved);
  return resolved;
}
