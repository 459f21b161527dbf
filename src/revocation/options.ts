/**
 * Options of the revocation list (`authorizer.revoke`): their documentation, defaults and
 * validation, owned beside the list that uses them.
 */
import type { OptionChecks } from '../lib/option-checks.js';

/**
 * How revocations (`authorizer.revoke`) are kept.
 * @inline
 */
export interface RevocationOptions {
  /**
   * How long (s) a revocation is kept — until the tokens it matches have expired: a `sub`
   * revocation from its `issuedBefore`, a `jti` revocation from when it was made. A revoked token
   * that still lives longer than this would be accepted again: set it to at least the longest
   * lifetime (`exp - iat`) of your tokens. Default `86_400` (24 h).
   */
  retainSec?: number;
  /**
   * Most revocations kept (each about 150 bytes). Past it, the list is not trimmed (that would
   * let a revoked token in again): it collapses into one revocation of every token issued before
   * now, kept `retainSec` — every caller signs in again — and `status().revocations.collapsed` says
   * so. Default `100_000`.
   */
  maxEntries?: number;
}

export const DEFAULT_REVOCATION: Readonly<Required<RevocationOptions>> = { retainSec: 86_400, maxEntries: 100_000 };

/** Validates `revocation` and fills in the defaults. */
export function resolveRevocationOptions(revocation: RevocationOptions | undefined, checks: OptionChecks): Required<RevocationOptions> {
  if (revocation === undefined) return { ...DEFAULT_REVOCATION };
  if (typeof revocation !== 'object' || (revocation as unknown) === null || Array.isArray(revocation)) checks.fail('"revocation" must be an object');
  checks.onlyKnown('revocation', revocation, Object.keys(DEFAULT_REVOCATION));
  return {
    retainSec: checks.positiveInt('revocation.retainSec', revocation.retainSec, DEFAULT_REVOCATION.retainSec),
    maxEntries: checks.positiveInt('revocation.maxEntries', revocation.maxEntries, DEFAULT_REVOCATION.maxEntries),
  };
}
