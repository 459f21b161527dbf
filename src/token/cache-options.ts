/**
 * Options of the verified-token cache: documentation, defaults and validation, owned here beside
 * the cache (`createAuthorizer` only composes them).
 */
import type { OptionChecks } from '../lib/option-checks.js';

/** Tuning of the verified-token cache. */
export interface TokenCacheOptions {
  /** Most tokens kept (LRU; once full, a token is stored on its second verification). Default `1000`. */
  max?: number;
  /** Longest time (ms) a verified token is served from the cache (never past its `exp`). Default `300_000` (5 min). */
  maxTtlMs?: number;
}

export const DEFAULT_TOKEN_CACHE: Readonly<Required<TokenCacheOptions>> = { max: 1000, maxTtlMs: 300_000 };

/** Validates `tokenCache` (`false` turns the cache off) and fills in the defaults. */
export function resolveTokenCacheOptions(tokenCache: TokenCacheOptions | false | undefined, checks: OptionChecks): Required<TokenCacheOptions> | false {
  if (tokenCache === false) return false;
  if (tokenCache === undefined) return { ...DEFAULT_TOKEN_CACHE };
  if (typeof tokenCache !== 'object' || (tokenCache as unknown) === null) checks.fail('"tokenCache" must be an object or false');
  checks.onlyKnown('tokenCache', tokenCache, Object.keys(DEFAULT_TOKEN_CACHE));
  return {
    max: checks.positiveInt('tokenCache.max', tokenCache.max, DEFAULT_TOKEN_CACHE.max),
    maxTtlMs: checks.positiveInt('tokenCache.maxTtlMs', tokenCache.maxTtlMs, DEFAULT_TOKEN_CACHE.maxTtlMs),
  };
}
