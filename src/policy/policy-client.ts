/**
 * The policy cache: the role policy of each application (spec §4.2), per application in a bounded
 * LRU, each a `RemoteCopy` (the freshness rules shared with the JWKS client: fresh, served stale
 * while one revalidation runs, served while the API fails until `ttlMs + maxStaleMs` after the last
 * success, then 503 `ERR_POLICY_UNAVAILABLE`; one fetch in flight; spacing and backoff). The fetch
 * itself is `fetch-policy.ts`; the hint channel's side, `hint-subscription.ts`.
 *
 * - The policy is fetched with the caller's token (unless `policyToken` is set). A 401/403 to that
 *   token is that caller's outcome only (401/403 `ERR_TOKEN_REJECTED`, or 503 misconfiguration when
 *   no token of the application was accepted lately): the cached policy, its freshness, the failure
 *   state and the spacing are untouched, callers that waited on that fetch try once more with their
 *   own token, and the refused token is remembered for a few seconds (`refusals.ts`).
 * - A hint naming another `changeId` than the one held makes the policy due until the API answers
 *   a fetch sent after it (or one that brings that `changeId`): a hint can cause a request, never
 *   cancel one. A new `changeId` found here is published once; a hint naming the `changeId` held
 *   lets a denial skip its refetch while the channel is connected.
 * (lru-cache's own `fetch()` would serve a stale value forever after a failed refresh: hence a
 * plain LRU of `RemoteCopy`s.)
 */
import { LRUCache } from 'lru-cache';
import { PolicyUnavailableError, type TokenRejectedError } from '../errors.js';
import { policyChanged, policyFailed, policyFetched, policyRevalidated, policyStale, policyTokenRefused } from '../diagnostics.js';
import { Closer } from '../lib/closer.js';
import { logUpstreamFailure } from '../lib/logger.js';
import type { AttemptMark, FetchKind } from '../lib/refresher.js';
import { RemoteCopy } from '../lib/remote-copy.js';
import { UpstreamError } from '../lib/upstream.js';
import { fetchPolicy } from './fetch-policy.js';
import { HintState } from './hint-state.js';
import { HintSubscription } from './hint-subscription.js';
import type { AppState, FetchOutcome, PolicyClientConfig, PolicyEntry, PolicyStatus } from './policy-types.js';
import { refusedError, Refusals } from './refusals.js';

export { ETAGC } from './fetch-policy.js';
export type { PolicyClientConfig, PolicyEntry, PolicyStatus } from './policy-types.js';
export { REFUSAL_MEMORY_MS } from './refusals.js';

/**
 * How many fetches a cold caller waits for when each one was refused for *another* caller's token:
 * enough to get one with its own token in the usual case, bounded under a flood of refused tokens.
 */
const MAX_ROUNDS = 3;

const RECORDED: FetchOutcome = { refused: false };
/** The options of `peek`'s `LRUCache.get`: without one, `get` makes an empty `{}` per call. */
const GET_OPTIONS: LRUCache.GetOptions<string, AppState, unknown> = {};

export class PolicyClient {
  readonly #config: PolicyClientConfig;
  readonly #apps: LRUCache<string, AppState>;
  readonly #closing = new Closer();
  readonly #refusals: Refusals;
  readonly #hints: HintSubscription;

  constructor(config: PolicyClientConfig) {
    this.#config = config;
    this.#refusals = new Refusals(config.now);
    this.#hints = new HintSubscription(config.hints, config.issuer, (application, changeId) => { this.#received(application, changeId); });
    this.#apps = new LRUCache<string, AppState>({
      max: config.maxApplications,
      dispose: (state, _app, reason) => {
        const policy = state.cache.value?.policy;
        if (reason === 'evict' && policy !== undefined) config.onDropped?.(policy, 'evicted');
      },
    });
  }

  /**
   * The fresh (not yet due) policy of `applicationId`, without a promise; else `undefined` (also
   * when `callerToken` was refused by the policy API a moment ago: `get()` then says so).
   */
  peek(applicationId: string, callerToken?: string): PolicyEntry | undefined {
    // The memory is empty unless some token was refused lately: no hashing on the usual path.
    if (callerToken !== undefined && this.#refusals.find(callerToken) !== undefined) return undefined;
    const state = this.#apps.get(applicationId, GET_OPTIONS);
    if (state?.hints.pending === true && this.#hintDue(state)) return undefined;
    return state?.cache.current();
  }

  /**
   * The policy to decide with for `applicationId`. Fresh: returned at once. Stale but within
   * `maxStaleMs`: returned at once, with a background revalidation. Otherwise: fetched (shared
   * with concurrent callers), or 503 when that fails.
   */
  async get(applicationId: string, callerToken: string): Promise<PolicyEntry> {
    this.#hints.ensure();
    const state = this.#state(applicationId);
    this.#throwIfRefused(applicationId, state, callerToken);
    const { cache } = state;
    const current = cache.current();
    if (current && (!state.hints.pending || !this.#hintDue(state))) return current;
    const entry = cache.usable();
    if (entry) {
      if (!current && policyStale.hasSubscribers) {
        policyStale.publish({ applicationId, changeId: entry.policy.changeId, ageMs: cache.ageMs() ?? 0, lastError: cache.lastError });
      }
      // workerd drops a request's leftover work: there this request revalidates and waits.
      const revalidating = this.#background(state, applicationId, callerToken);
      if (revalidating) await revalidating;
      return cache.usable() ?? entry;
    }
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      // Nothing usable: a fetch is needed to answer, never held back by the spacing (a retry
      // after another caller's token was refused neither: that refusal said nothing about the API).
      const pending = this.#startFetch(state, applicationId, callerToken, 'needed');
      if (!pending) break;
      const outcome = await cache.join(pending, RECORDED);
      const usable = cache.usable();
      if (usable) return usable;
      if (!outcome.refused) break;
      if (outcome.token === callerToken) throw this.#refusedError(applicationId, state, outcome.status);
      this.#throwIfRefused(applicationId, state, callerToken);
    }
    return this.#unavailable(applicationId, state);
  }

  /**
   * After a denial: refetches once (shared) if the spacing allows, so that a role granted in the
   * console works on the next request. Resolves with the entry to decide again with, or
   * `undefined` when nothing new can be had.
   */
  async refreshAfterDenial(applicationId: string, callerToken: string, seen: PolicyEntry): Promise<PolicyEntry | undefined> {
    const state = this.#state(applicationId);
    // The fleet said the changeId held is the latest: a refetch would only confirm it. (A forged
    // hint can only delay a grant this way, never keep a revoked one: a pending hint still refetches.)
    if (state.hints.confirms(state.cache.value?.policy.changeId) && this.hintsConnected() === true) return undefined;
    const pending = this.#startFetch(state, applicationId, callerToken, 'optional');
    const outcome = pending ? await state.cache.join(pending, RECORDED) : RECORDED;
    if (outcome.refused && outcome.token === callerToken) throw this.#refusedError(applicationId, state, outcome.status);
    const entry = state.cache.usable();
    return entry && entry.policy !== seen.policy ? entry : undefined;
  }

  /** Where each cached application's policy stands: plain JSON (the `changeId`, never the policy). */
  status(): Record<string, PolicyStatus> {
    const out: Record<string, PolicyStatus> = {};
    // Oldest first, and without touching the LRU order.
    for (const [applicationId, state] of this.#apps.rentries() as Iterable<[string, AppState]>) {
      out[applicationId] = { ...state.cache.status(), changeId: state.cache.value?.policy.changeId ?? null };
    }
    return out;
  }

  /** The policy of `applicationId` while usable (within its stale bound), without a fetch nor touching the LRU order. */
  usable(applicationId: string): PolicyEntry | undefined {
    return this.#apps.peek(applicationId)?.cache.usable();
  }

  /**
   * When (epoch ms) the policy of `applicationId` should next be looked at by one who keeps it
   * current without traffic (a watch): its refresh's due point, or, with a hint pending or after
   * failures, when the next fetch may start; `undefined` when none is cached.
   */
  nextRevalidationAt(applicationId: string): number | undefined {
    const state = this.#apps.peek(applicationId);
    if (state === undefined) return undefined;
    return state.cache.status().nextRefreshAt ?? this.#config.now() + 1_000;
  }

  /** See {@link HintSubscription.connected}. */
  hintsConnected(): boolean | undefined {
    return this.#hints.connected();
  }

  /** Aborts fetches under way and forgets every policy; later fetches fail at once (503). */
  close(): void {
    this.#hints.close();
    this.#closing.close();
    this.#apps.clear();
    this.#refusals.clear();
  }

  #throwIfRefused(applicationId: string, state: AppState, token: string): void {
    const refusal = this.#refusals.find(token);
    if (refusal) throw this.#refusedError(applicationId, state, refusal.status);
  }

  #refusedError(applicationId: string, state: AppState, status: 401 | 403): TokenRejectedError | PolicyUnavailableError {
    return refusedError(this.#config.url, applicationId, this.#acceptedRecently(state), status);
  }

  /**
   * True when the policy API accepted a token of this application within twice the life of a cached
   * policy (`2 × (ttlMs + maxStaleMs)`): evidence that the API works, so a refusal is about the
   * token — also for the first caller after a quiet spell long enough for the policy to expire.
   */
  #acceptedRecently(state: AppState): boolean {
    const { acceptedAt } = state;
    return acceptedAt !== undefined && this.#config.now() - acceptedAt <= 2 * (this.#config.ttlMs + this.#config.maxStaleMs);
  }

  #state(applicationId: string): AppState {
    let state = this.#apps.get(applicationId);
    if (!state) {
      const cache = new RemoteCopy<PolicyEntry>({ ...this.#config, what: 'policy API' });
      state = { cache, acceptedAt: undefined, bodyDigest: undefined, hints: new HintState() };
      this.#apps.set(applicationId, state);
    }
    return state;
  }

  /**
   * The fetch to wait for: the one running, else a new one of `kind` unless the rules forbid it or
   * the caller's token was refused a moment ago (a revalidation then waits for the next caller's).
   */
  #startFetch(state: AppState, applicationId: string, callerToken: string, kind: FetchKind): Promise<FetchOutcome> | undefined {
    const { cache } = state;
    if (cache.running()) return cache.start(() => Promise.resolve(RECORDED), kind);
    if (this.#config.policyToken === undefined && this.#refusals.find(callerToken) !== undefined) return undefined;
    const mark = cache.attemptMark();
    return cache.start(() => this.#fetch(state, applicationId, callerToken, mark), kind);
  }

  /** A revalidation of a due (or hinted) policy: in the background, or the promise workerd must wait for. */
  #background(state: AppState, applicationId: string, callerToken: string): Promise<FetchOutcome> | undefined {
    const { cache } = state;
    if (!cache.running() && this.#config.policyToken === undefined && this.#refusals.find(callerToken) !== undefined) return undefined;
    const mark = cache.attemptMark();
    return cache.background(() => this.#fetch(state, applicationId, callerToken, mark), RECORDED);
  }

  /** A hinted revalidation can start now (or one runs): the spacing, not the hint, sets the pace. */
  #hintDue(state: AppState): boolean {
    return state.cache.running() || state.cache.mayStart('optional');
  }

  /** A valid hint of this issuer: at most a reason to revalidate. */
  #received(application: string, changeId: string): void {
    // Only applications cached here; peek leaves the LRU order alone.
    const state = this.#apps.peek(application);
    const held = state?.cache.value?.policy.changeId;
    if (state === undefined || held === undefined || !state.hints.received(changeId, held)) return;
    this.#config.onHinted?.(application);
    // With the service's own token there is no need to wait for a caller's request.
    if (this.#config.policyToken !== undefined) void this.#startFetch(state, application, '', 'optional');
  }

  /** Never rejects: the outcome is recorded in `state`, or is a refusal of `callerToken`. */
  async #fetch(state: AppState, applicationId: string, callerToken: string, attemptBefore: AttemptMark): Promise<FetchOutcome> {
    const config = this.#config;
    const previous = state.cache.value;
    const serial = state.hints.serial;
    try {
      const token = config.policyToken ? await config.policyToken() : callerToken;
      const held = previous && { policy: previous.policy, digest: state.bodyDigest };
      const fetched = await fetchPolicy({ ...config, closer: this.#closing }, applicationId, token, held, () => { state.acceptedAt = config.now(); });
      if (fetched.kind === 'confirmed' && previous) {
        state.bodyDigest = fetched.digest;
        state.cache.succeeded({ policy: previous.policy, fetchedAt: config.now() });
        state.hints.answered(serial, previous.policy.changeId);
        if (policyRevalidated.hasSubscribers) policyRevalidated.publish({ applicationId, changeId: previous.policy.changeId, notModified: fetched.notModified });
        return RECORDED;
      }
      const { policy } = fetched as Extract<typeof fetched, { kind: 'new' }>;
      state.cache.succeeded({ policy, fetchedAt: config.now() });
      config.onChanged?.(applicationId, policy);
      // A refused or failed fetch leaves a pending hint standing, so a revoked caller's token cannot
      // make a replica drop it.
      state.hints.answered(serial, policy.changeId);
      state.bodyDigest = fetched.digest;
      if (previous) {
        config.onDropped?.(previous.policy, 'replaced');
        // Already announced (this replica fetched it because of that hint): no echo.
        if (!state.hints.announced(policy.changeId)) this.#hints.publish(applicationId, policy.changeId);
        if (policyChanged.hasSubscribers) policyChanged.publish({ applicationId, previousChangeId: previous.policy.changeId, changeId: policy.changeId });
      } else if (policyFetched.hasSubscribers) {
        policyFetched.publish({ applicationId, changeId: policy.changeId });
      }
      return RECORDED;
    } catch (error) {
      const status = error instanceof UpstreamError && error.reason === 'status' ? error.statusCode : undefined;
      if ((status === 401 || status === 403) && config.policyToken === undefined) return this.#refusedFetch(state, applicationId, callerToken, status, attemptBefore, error as UpstreamError);
      // With `policyToken`, a 401/403 refuses the service's own identity: UpstreamError marks it misconfigured.
      const failure = state.cache.recordFailure(error, (cause) => new UpstreamError('network', 'the policy could not be fetched', { cause }));
      if (policyFailed.hasSubscribers) policyFailed.publish({ applicationId, reason: failure.reason, misconfigured: failure.misconfigured, error: failure });
      return RECORDED;
    }
  }

  /**
   * The policy API refused the caller's own token: remember it briefly, give the spacing back (the
   * next caller's token may revalidate at once), and leave the app state alone. When no token of
   * the application was accepted lately, it reads as a misconfiguration in `policy:failed`.
   */
  #refusedFetch(state: AppState, applicationId: string, token: string, status: 401 | 403, attemptBefore: AttemptMark, failure: UpstreamError): FetchOutcome {
    state.cache.forgetAttempt(attemptBefore);
    this.#refusals.remember(token, status);
    const acceptedRecently = this.#acceptedRecently(state);
    if (policyTokenRefused.hasSubscribers) policyTokenRefused.publish({ applicationId, statusCode: status, acceptedRecently });
    if (!acceptedRecently && policyFailed.hasSubscribers) policyFailed.publish({ applicationId, reason: failure.reason, misconfigured: true, error: failure });
    if (!acceptedRecently) logUpstreamFailure(this.#config.log, 'policy API', this.#config.url, failure);
    return { refused: true, token, status };
  }

  #unavailable(applicationId: string, state: AppState): never {
    const { cause: last, misconfigured } = state.cache.unavailability();
    const detail = last ? `: ${misconfigured ? 'the policy API is misconfigured (check policyUrl / baseUrl): ' : ''}${last.message}` : '';
    throw new PolicyUnavailableError(`no usable role policy for application ${applicationId}${detail}`, { cause: last, misconfigured });
  }
}
