/**
 * The policy client: fetches the role policy of an application (spec §4.2) and keeps it, per
 * application, in a bounded LRU.
 *
 * - fresh for `ttlMs`; then served stale while one background revalidation runs, sent with
 *   `If-None-Match: "<changeId>"` (304 or an unchanged `changeId` keep the compiled policy);
 * - a new `changeId` swaps the newly compiled policy in, in one assignment;
 * - on failure, the cached policy is served until `maxStaleMs` after its last successful fetch;
 *   past that, or with nothing cached, callers get 503 `ERR_POLICY_UNAVAILABLE`;
 * - at most one fetch per application is in flight, and fetches that are not needed to answer
 *   (background revalidation, refetch after a denial, retry after a failure) are spaced by at
 *   least `minRefreshIntervalMs`.
 *
 * lru-cache's own `fetch()` would serve a stale value forever after a failed refresh; the hard
 * `maxStaleMs` bound and the per-application refetch budget are why this is kept by hand on top
 * of a plain LRU.
 */
import { LRUCache } from 'lru-cache';
import type { Dispatcher } from 'undici';
import { PolicyUnavailableError } from '../errors.js';
import { policyChanged, policyFailed, policyFetched, policyRevalidated, policyStale } from '../diagnostics.js';
import { compilePolicy } from '../engine/compile-policy.js';
import { httpGet, parseJsonBody, UpstreamError } from '../lib/upstream.js';
import type { CompiledPolicy, RolePolicy } from './types.js';
import { policyProblem } from './validate-policy.js';

/** The characters of an opaque entity tag (RFC 9110 `etagc`), restricted to visible ASCII. */
const ETAGC = /^[\x21\x23-\x7e]+$/;

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
}

/** A compiled policy and when it was last confirmed by the API. Replaced, never mutated. */
export interface PolicyEntry {
  readonly policy: CompiledPolicy;
  readonly fetchedAt: number;
}

interface AppState {
  entry: PolicyEntry | undefined;
  inflight: Promise<void> | undefined;
  lastAttemptAt: number | undefined;
  lastError: UpstreamError | undefined;
}

export class PolicyClient {
  readonly #config: PolicyClientConfig;
  readonly #apps: LRUCache<string, AppState>;
  readonly #closing = new AbortController();

  constructor(config: PolicyClientConfig) {
    this.#config = config;
    this.#apps = new LRUCache<string, AppState>({ max: config.maxApplications });
  }

  /** The fresh (younger than `ttlMs`) policy of `applicationId`, without a promise; else `undefined`. */
  peek(applicationId: string): PolicyEntry | undefined {
    const entry = this.#apps.get(applicationId)?.entry;
    return entry && this.#config.now() - entry.fetchedAt < this.#config.ttlMs ? entry : undefined;
  }

  /**
   * The policy to decide with for `applicationId`. Fresh: returned at once. Stale but within
   * `maxStaleMs`: returned at once, with a background revalidation. Otherwise: fetched (shared
   * with concurrent callers), or 503 when that fails.
   */
  async get(applicationId: string, callerToken: string): Promise<PolicyEntry> {
    const state = this.#state(applicationId);
    const { entry } = state;
    if (entry) {
      const age = this.#config.now() - entry.fetchedAt;
      if (age < this.#config.ttlMs) return entry;
      if (age <= this.#config.maxStaleMs) {
        if (policyStale.hasSubscribers) {
          policyStale.publish({ applicationId, changeId: entry.policy.changeId, ageMs: age, lastError: state.lastError });
        }
        this.#startFetch(state, applicationId, callerToken, false);
        return entry;
      }
    }
    this.#startFetch(state, applicationId, callerToken, state.lastError === undefined);
    if (state.inflight) await state.inflight;
    return this.#usable(state) ?? this.#unavailable(applicationId, state);
  }

  /**
   * After a denial: refetches once (shared) if the cached copy was confirmed more than
   * `minRefreshIntervalMs` ago, so that a role granted in the console works on the next request.
   * Resolves with the entry to decide again with, or `undefined` when nothing new can be had.
   */
  async refreshAfterDenial(applicationId: string, callerToken: string, seen: PolicyEntry): Promise<PolicyEntry | undefined> {
    const state = this.#state(applicationId);
    this.#startFetch(state, applicationId, callerToken, false);
    if (state.inflight) await state.inflight;
    const entry = this.#usable(state);
    return entry && entry.policy !== seen.policy ? entry : undefined;
  }

  /** Aborts fetches under way and forgets every policy; later fetches fail at once (503). */
  close(): void {
    this.#closing.abort();
    this.#apps.clear();
  }

  #state(applicationId: string): AppState {
    let state = this.#apps.get(applicationId);
    if (!state) {
      state = { entry: undefined, inflight: undefined, lastAttemptAt: undefined, lastError: undefined };
      this.#apps.set(applicationId, state);
    }
    return state;
  }

  #usable(state: AppState): PolicyEntry | undefined {
    const { entry } = state;
    return entry && this.#config.now() - entry.fetchedAt <= this.#config.maxStaleMs ? entry : undefined;
  }

  /** Starts a fetch unless one runs; `urgent` skips the spacing (a cold miss that has not failed yet). */
  #startFetch(state: AppState, applicationId: string, callerToken: string, urgent: boolean): void {
    if (state.inflight) return;
    const now = this.#config.now();
    if (!urgent && state.lastAttemptAt !== undefined && now - state.lastAttemptAt < this.#config.minRefreshIntervalMs) return;
    state.lastAttemptAt = now;
    state.inflight = this.#fetch(state, applicationId, callerToken).finally(() => {
      state.inflight = undefined;
    });
  }

  /** Never rejects: the outcome is recorded in `state`. */
  async #fetch(state: AppState, applicationId: string, callerToken: string): Promise<void> {
    const config = this.#config;
    const previous = state.entry;
    try {
      const token = config.policyToken ? await config.policyToken() : callerToken;
      const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${token}` };
      // Only a changeId that is a valid entity tag (visible ASCII, no '"') is sent: any other
      // character makes undici refuse the header, and every revalidation would fail until the
      // policy is past maxStaleMs. Without the header the API answers 200 and the changeId decides.
      if (previous && ETAGC.test(previous.policy.changeId)) headers['if-none-match'] = `"${previous.policy.changeId}"`;
      const res = await httpGet(config.url, {
        dispatcher: config.dispatcher,
        timeoutMs: config.timeoutMs,
        maxBytes: config.maxBytes,
        headers,
        acceptStatuses: previous ? [304] : [],
        signal: this.#closing.signal,
      });
      if (res.statusCode === 304 && previous) {
        this.#confirm(state, applicationId, previous, true);
        return;
      }
      const body = parseJsonBody(res.body) as Partial<RolePolicy> | null;
      if (typeof body !== 'object' || body === null || body.applicationId !== applicationId) {
        throw new UpstreamError('malformed', 'the policy is not the one of the token\'s application');
      }
      // Validated before the changeId comparison: a malformed answer is a failure even when it
      // repeats the cached changeId, so it can never extend the cached policy's life past maxStaleMs.
      const problem = policyProblem(body);
      if (problem !== undefined) throw new UpstreamError('malformed', `the policy is malformed: ${problem}`);
      if (previous && body.changeId === previous.policy.changeId) {
        this.#confirm(state, applicationId, previous, false);
        return;
      }
      const policy = compilePolicy(body as RolePolicy);
      state.entry = { policy, fetchedAt: config.now() };
      state.lastError = undefined;
      if (previous) {
        if (policyChanged.hasSubscribers) policyChanged.publish({ applicationId, previousChangeId: previous.policy.changeId, changeId: policy.changeId });
      } else if (policyFetched.hasSubscribers) {
        policyFetched.publish({ applicationId, changeId: policy.changeId });
      }
    } catch (error) {
      const failure = error instanceof UpstreamError ? error : new UpstreamError('network', 'the policy could not be fetched', { cause: error });
      state.lastError = failure;
      if (policyFailed.hasSubscribers) policyFailed.publish({ applicationId, reason: failure.reason, error: failure });
    }
  }

  /** The API confirmed the cached policy (304, or the same changeId): keep it compiled, fresh again. */
  #confirm(state: AppState, applicationId: string, previous: PolicyEntry, notModified: boolean): void {
    state.entry = { policy: previous.policy, fetchedAt: this.#config.now() };
    state.lastError = undefined;
    if (policyRevalidated.hasSubscribers) policyRevalidated.publish({ applicationId, changeId: previous.policy.changeId, notModified });
  }

  #unavailable(applicationId: string, state: AppState): never {
    const detail = state.lastError ? `: ${state.lastError.message}` : '';
    throw new PolicyUnavailableError(`no usable role policy for application ${applicationId}${detail}`, { cause: state.lastError });
  }
}
