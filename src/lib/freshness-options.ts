/**
 * The one place where the freshness options of a remote copy (`jwks`, `policy`) are held against
 * each other. Every combination is valid and honoured as written; the two whose promises meet are
 * said once per process, naming the option, so that nothing is ever overridden silently.
 */
import { MIN_BACKOFF_MS } from './refresher.js';
import { warnOnce } from './warn-once.js';

/** The options of a remote copy that interact. */
export interface FreshnessOptions {
  readonly ttlMs: number;
  readonly minRefreshIntervalMs: number;
}

/**
 * Warns (once per process and case) when `minRefreshIntervalMs` was set:
 * - above `ttlMs`: a copy is then revalidated at most every `minRefreshIntervalMs` (it stays
 *   served meanwhile, never past `ttlMs + maxStaleMs`);
 * - below 1 s: the first retry after a failed fetch with nothing cached honours it, later ones are
 *   spaced from 1 s (the backoff's floor), so that a failing IAM is not asked by every request.
 */
export function warnFreshness(cache: 'jwks' | 'policy', minRefreshIntervalSet: boolean, options: FreshnessOptions): void {
  if (!minRefreshIntervalSet) return;
  const { ttlMs, minRefreshIntervalMs } = options;
  const name = `"${cache}.minRefreshIntervalMs"`;
  const what = cache === 'jwks' ? 'keys are' : 'a policy is';
  if (ttlMs < minRefreshIntervalMs) {
    warnOnce(`IAM_AUTHZ_${cache.toUpperCase()}_TTL_BELOW_MIN_REFRESH`, `createAuthorizer: "${cache}.ttlMs" (${ttlMs} ms) is shorter than ${name} (${minRefreshIntervalMs} ms): ${what} not revalidated more often than every ${minRefreshIntervalMs} ms (and never served past "${cache}.ttlMs" + "${cache}.maxStaleMs" after the last success)`);
  }
  if (minRefreshIntervalMs < MIN_BACKOFF_MS) {
    warnOnce(`IAM_AUTHZ_${cache.toUpperCase()}_BACKOFF_FLOOR`, `createAuthorizer: ${name} is ${minRefreshIntervalMs} ms: after a failed fetch with nothing cached the first retry comes within it, later retries are spaced from ${MIN_BACKOFF_MS} ms (the backoff's floor)`);
  }
}
