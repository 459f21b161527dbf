/**
 * The tokens the policy API refused a moment ago (401/403), remembered by their SHA-256 (never
 * the tokens themselves) for a few seconds: a client repeating a refused token gets the same
 * refusal without the IAM being asked again per request.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { PolicyUnavailableError, TokenRejectedError } from '../errors.js';

/** How long a token the policy API refused is answered from memory instead of asked again. */
export const REFUSAL_MEMORY_MS = 5_000;
/** How many refused tokens are remembered (least recently used dropped first). */
const REFUSAL_MEMORY_MAX = 1_000;

/** A refusal remembered: the API's status, and until when it is answered from memory. */
export interface Refusal {
  readonly status: 401 | 403;
  readonly until: number;
}

export class Refusals {
  readonly #now: () => number;
  readonly #refused = new LRUCache<string, Refusal>({ max: REFUSAL_MEMORY_MAX });

  constructor(now: () => number) {
    this.#now = now;
  }

  /** The refusal of `token` if it is recent enough; hashes nothing while none is remembered. */
  find(token: string): Refusal | undefined {
    if (this.#refused.size === 0) return undefined;
    const key = tokenKey(token);
    const refusal = this.#refused.get(key);
    if (refusal && refusal.until <= this.#now()) {
      this.#refused.delete(key);
      return undefined;
    }
    return refusal;
  }

  remember(token: string, status: 401 | 403): void {
    this.#refused.set(tokenKey(token), { status, until: this.#now() + REFUSAL_MEMORY_MS });
  }

  clear(): void {
    this.#refused.clear();
  }
}

function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/**
 * What a caller whose token the policy API refused gets: about its token when the API accepted a
 * token of the application lately (so it works), else a 503 that reads as the misconfiguration it
 * most likely is — a policy API refusing every token must not turn into 401 for everyone.
 */
export function refusedError(url: string, applicationId: string, acceptedRecently: boolean, status: 401 | 403): TokenRejectedError | PolicyUnavailableError {
  if (acceptedRecently) {
    return new TokenRejectedError(status, status === 401
      ? 'the IAM rejected the token: the policy API answered 401 to it (revoked, or expired at the IAM)'
      : 'the IAM refused the token access to the role policy: the policy API answered 403 to it');
  }
  return new PolicyUnavailableError(
    `the policy API is misconfigured or refuses every token: GET ${url} answered HTTP ${status} and no token of application ${applicationId} was accepted lately (check policyUrl / baseUrl, and that the IAM accepts this application's tokens there)`,
    { misconfigured: true },
  );
}
