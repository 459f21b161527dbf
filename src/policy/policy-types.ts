/**
 * What the policy cache (`policy-client.ts`) is made of: its configuration, what it hands out
 * (an entry, a status) and what it keeps per application.
 */
import type { Dispatcher } from 'undici';
import type { CompiledPolicy } from '../engine/compile-policy.js';
import type { Log } from '../lib/logger.js';
import type { RefresherStatus } from '../lib/refresher.js';
import type { RemoteCopy } from '../lib/remote-copy.js';
import type { HintState } from './hint-state.js';
import type { HintChannel } from './hints.js';

export interface PolicyClientConfig {
  url: string;
  dispatcher: Dispatcher;
  /** When set, authenticates policy requests as the service instead of with the caller's token. */
  policyToken: (() => Promise<string>) | undefined;
  ttlMs: number;
  maxStaleMs: number;
  minRefreshIntervalMs: number;
  timeoutMs: number;
  maxApplications: number;
  maxBytes: number;
  now: () => number;
  /** Uniform in [0, 1) for the jitter; tests only. Default `Math.random`. */
  random?: () => number;
  /** The `iss` whose policies this client holds: hints of other issuers are ignored. */
  issuer?: string | undefined;
  /** The `policy.hints` channel, if any. */
  hints?: HintChannel | undefined;
  /** The authorizer's logger: every failed fetch at `warn` (rate-limited), even while a cached policy is served. */
  log?: Log | undefined;
  /**
   * Called with a compiled policy this client no longer holds — replaced by a new `changeId`, or
   * its application evicted from the LRU — so that nothing else keeps it alive: memory for
   * policies stays bounded by `maxApplications`.
   */
  onDropped?: ((policy: CompiledPolicy, reason: 'replaced' | 'evicted') => void) | undefined;
  /** Called with each policy this client takes in for an application: the first, and every new `changeId`. */
  onChanged?: ((applicationId: string, policy: CompiledPolicy) => void) | undefined;
  /** Called when a hint makes an application's policy due (a revalidation waits for the spacing, or a request). */
  onHinted?: ((applicationId: string) => void) | undefined;
}

/** A compiled policy and when it was last confirmed by the API. Replaced, never mutated. */
export interface PolicyEntry {
  readonly policy: CompiledPolicy;
  readonly fetchedAt: number;
}

/** Where one application's policy stands (see `Authorizer.status`). */
export interface PolicyStatus extends RefresherStatus {
  /** The `changeId` of the policy held; `null` when none. */
  changeId: string | null;
}

export interface AppState {
  /** The policy, its freshness, failures and spacing. */
  cache: RemoteCopy<PolicyEntry>;
  /** When the policy API last accepted a token of this application (any 2xx or 304 answer). */
  acceptedAt: number | undefined;
  /** SHA-256 of the last 200 body that set or confirmed the policy (see `fetch-policy.ts`). */
  bodyDigest: string | undefined;
  /** What the hints said about this application. */
  readonly hints: HintState;
}

/** How a fetch ended: recorded in the app state, or a refusal of the token it was sent with. */
export type FetchOutcome = { readonly refused: false } | { readonly refused: true; readonly token: string; readonly status: 401 | 403 };
