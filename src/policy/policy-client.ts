/**
 * The policy client: fetches the role policy of an application (spec §4.2) and keeps it, per
 * application, in a bounded LRU.
 *
 * - fresh until a random point in the last fifth of `ttlMs` (see `Refresher`: replicas started
 *   together drift apart); then served while one background revalidation runs, sent with
 *   `If-None-Match: "<changeId>"` (304 or an unchanged `changeId` keep the compiled policy);
 * - a new `changeId` swaps the newly compiled policy in, in one assignment;
 * - on failure, the cached policy is served for `maxStaleMs` after it stopped being fresh (RFC 5861
 *   stale-if-error: until `ttlMs + maxStaleMs` after its last successful fetch);
 *   past that, or with nothing cached, callers get 503 `ERR_POLICY_UNAVAILABLE`;
 * - at most one fetch per application is in flight, and fetches that are not needed to answer
 *   (background revalidation, refetch after a denial) are spaced by at least
 *   `minRefreshIntervalMs`; retries after a failure back off from there (jittered, `Retry-After`
 *   honoured). The timing rules are the `Refresher`'s, shared with the JWKS client.
 *
 * - the policy is fetched with the caller's token (unless `policyToken` is set). A 401/403 to that
 *   token is that caller's outcome only (401/403 `ERR_TOKEN_REJECTED`, or 503 misconfiguration when
 *   no token of the application was accepted lately): the cached policy, its freshness, the failure
 *   state and the refetch budget are untouched, callers that waited on that fetch try once more
 *   with their own token, and the refused token is remembered for a few seconds so that a client
 *   repeating it cannot make us ask the IAM again per request.
 *
 * - with a hint channel (`policy.hints`): subscribed on first use, never at construction (no I/O
 *   there). A hint of this issuer, for an application cached, naming another `changeId` makes the
 *   policy due: the next request (or at once with `policyToken`) revalidates, within the spacing.
 *   A fetch that brings a `changeId` different from the one held, and not already announced by a
 *   hint, is published once. A hint naming the `changeId` held lets a denial skip its refetch
 *   while the channel is connected. A hint carries no policy: at worst it costs one request.
 *
 * lru-cache's own `fetch()` would serve a stale value forever after a failed refresh; the hard
 * `maxStaleMs` bound and the per-application refetch budget are why this is kept by hand on top
 * of a plain LRU.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Dispatcher } from 'undici';
import { PolicyUnavailableError, TokenRejectedError } from '../errors.js';
import { policyChanged, policyFailed, policyFetched, policyRevalidated, policyStale, policyTokenRefused } from '../diagnostics.js';
import { compilePolicyYielding } from '../engine/compile-policy.js';
import { BYTES_PER_TURN, nextTurn } from '../lib/sliced-json.js';
import { Closer } from '../lib/closer.js';
import { backgroundWorkAllowed } from '../lib/transport.js';
import { Refresher, retryAfterMs, type RefresherStatus } from '../lib/refresher.js';
import { httpGet, parseJsonBodySliced, UpstreamError } from '../lib/upstream.js';
import type { RolePolicy } from '../types.js';
import type { CompiledPolicy } from '../engine/compile-policy.js';
import type { HintChannel, PolicyHint } from './hints.js';
import { policyMistakeSliced } from './validate-policy.js';
import { logUpstreamFailure, type Log } from '../lib/logger.js';

/** The characters of an opaque entity tag (RFC 9110 `etagc`), restricted to visible ASCII. */
export const ETAGC = /^[\x21\x23-\x7e]+$/;

/** How long a token the policy API refused is answered from memory instead of asked again. */
export const REFUSAL_MEMORY_MS = 5_000;
/** Longest field of a hint accepted (`issuer`, `application`, `changeId`). */
const MAX_HINT_FIELD = 1024;

/** How many refused tokens are remembered (least recently used dropped first). */
const REFUSAL_MEMORY_MAX = 1_000;
/**
 * How many fetches a cold caller waits for when each one was refused for *another* caller's token:
 * enough to get one with its own token in the usual case, bounded under a flood of refused tokens.
 */
const MAX_ROUNDS = 3;

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

interface AppState {
  /** The policy, its freshness, failures and fetch budget. */
  cache: Refresher<PolicyEntry>;
  /** When the policy API last accepted a token of this application (any 2xx or 304 answer). */
  acceptedAt: number | undefined;
  /**
   * SHA-256 of the last 200 body that set or confirmed `entry`: the same bytes again are the same
   * policy, so they are neither parsed nor compiled again (the IAM sends no `ETag`).
   */
  bodyDigest: string | undefined;
  /** The `changeId` of the last valid hint received for this application. */
  lastHint: string | undefined;
  /**
   * The `changeId` of a hint not answered yet: it named another `changeId` than the one held, so
   * the policy is revalidated as soon as the spacing allows. Only an answer of the API clears it
   * (see {@link PolicyClient.#answered}); no later hint does, so a replayed one cannot cancel it.
   */
  pendingHint: string | undefined;
  /** Counts the hints that set {@link pendingHint}: a fetch sent before the last of them does not answer it. */
  hintSerial: number;
}

/** How a fetch ended: recorded in the app state, or a refusal of the token it was sent with. */
type AttemptMark = ReturnType<Refresher<PolicyEntry>['attemptMark']>;

type FetchOutcome = { readonly refused: false } | { readonly refused: true; readonly token: string; readonly status: 401 | 403 };
const RECORDED: FetchOutcome = { refused: false };
/** The options of `peek`'s `LRUCache.get`: without one, `get` makes an empty `{}` per call. */
const GET_OPTIONS: LRUCache.GetOptions<string, AppState, unknown> = {};

interface Refusal {
  readonly status: 401 | 403;
  readonly until: number;
}

export class PolicyClient {
  readonly #config: PolicyClientConfig;
  readonly #apps: LRUCache<string, AppState>;
  readonly #closing = new Closer();
  /** SHA-256 of recently refused tokens (never the tokens themselves) → the refusal. */
  readonly #refused = new LRUCache<string, Refusal>({ max: REFUSAL_MEMORY_MAX });
  /** The hint channel's state: not yet subscribed, subscribed (with its unsubscribe), or broken. */
  #hints: 'idle' | 'broken' | 'closed' | (() => void) = 'idle';

  constructor(config: PolicyClientConfig) {
    this.#config = config;
    this.#apps = new LRUCache<string, AppState>({
      max: config.maxApplications,
      dispose: (state, _app, reason) => {
        const policy = state.cache.value?.policy;
        if (reason === 'evict' && policy !== undefined) config.onDropped?.(policy, 'evicted');
      },
    });
  }

  /**
   * The fresh (younger than `ttlMs`) policy of `applicationId`, without a promise; else `undefined`
   * (also when `callerToken` was refused by the policy API a moment ago: `get()` then says so).
   */
  peek(applicationId: string, callerToken?: string): PolicyEntry | undefined {
    // The memory is empty unless some token was refused lately: no hashing on the usual path.
    if (callerToken !== undefined && this.#refused.size > 0 && this.#refusal(callerToken) !== undefined) return undefined;
    const state = this.#apps.get(applicationId, GET_OPTIONS);
    if (state?.pendingHint !== undefined && this.#hintDue(state)) return undefined;
    return state?.cache.current();
  }

  /**
   * The policy to decide with for `applicationId`. Fresh: returned at once. Stale but within
   * `maxStaleMs`: returned at once, with a background revalidation. Otherwise: fetched (shared
   * with concurrent callers), or 503 when that fails.
   */
  async get(applicationId: string, callerToken: string): Promise<PolicyEntry> {
    if (this.#hints === 'idle') this.#subscribe();
    const state = this.#state(applicationId);
    this.#throwIfRefused(applicationId, state, callerToken);
    const { cache } = state;
    const current = cache.current();
    if (current) {
      if (state.pendingHint === undefined || !this.#hintDue(state)) return current;
      const revalidating = this.#startFetch(state, applicationId, callerToken, false);
      if (revalidating && !backgroundWorkAllowed()) await cache.join(revalidating, RECORDED);
      return cache.usable() ?? current;
    }
    const entry = cache.usable();
    if (entry) {
      if (policyStale.hasSubscribers) {
        policyStale.publish({ applicationId, changeId: entry.policy.changeId, ageMs: cache.ageMs() ?? 0, lastError: cache.lastError });
      }
      const revalidating = this.#startFetch(state, applicationId, callerToken, false);
      // workerd drops a request's leftover work: there this request revalidates and waits.
      if (revalidating && !backgroundWorkAllowed()) await cache.join(revalidating, RECORDED);
      return cache.usable() ?? entry;
    }
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      // A retry after another caller's token was refused is not held back by the refetch spacing:
      // that refusal said nothing about the application.
      const pending = this.#startFetch(state, applicationId, callerToken, round > 0 || state.cache.lastError === undefined);
      if (!pending) break;
      const outcome = await state.cache.join(pending, RECORDED);
      const usable = state.cache.usable();
      if (usable) return usable;
      if (!outcome.refused) break;
      if (outcome.token === callerToken) throw this.#refusedError(applicationId, state, outcome.status);
      this.#throwIfRefused(applicationId, state, callerToken);
    }
    return this.#unavailable(applicationId, state);
  }

  /**
   * After a denial: refetches once (shared) if the cached copy was confirmed more than
   * `minRefreshIntervalMs` ago, so that a role granted in the console works on the next request.
   * Resolves with the entry to decide again with, or `undefined` when nothing new can be had.
   */
  async refreshAfterDenial(applicationId: string, callerToken: string, seen: PolicyEntry): Promise<PolicyEntry | undefined> {
    const state = this.#state(applicationId);
    // The fleet said the changeId held is the latest: a refetch would only confirm it. (A forged
    // hint can only delay a grant this way, never keep a revoked one: a pending hint still refetches.)
    if (state.pendingHint === undefined && state.lastHint !== undefined && state.lastHint === state.cache.value?.policy.changeId && this.hintsConnected() === true) return undefined;
    const pending = this.#startFetch(state, applicationId, callerToken, false);
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

  /**
   * `undefined` without a hint channel; else whether hints are received now: subscribed (or not
   * yet used) and the channel's `connected` is not `false`. `false` when subscribing threw.
   */
  hintsConnected(): boolean | undefined {
    const { hints } = this.#config;
    if (hints === undefined) return undefined;
    if (this.#hints === 'broken' || this.#hints === 'closed') return false;
    try {
      return hints.connected !== false;
    } catch {
      return false;
    }
  }

  /** Aborts fetches under way and forgets every policy; later fetches fail at once (503). */
  close(): void {
    const unsubscribe = this.#hints;
    this.#hints = 'closed';
    if (typeof unsubscribe === 'function') {
      try {
        unsubscribe();
      } catch {
        // The channel's own failure: nothing more to release here.
      }
    }
    this.#closing.close();
    this.#apps.clear();
    this.#refused.clear();
  }

  #tokenKey(token: string): string {
    return createHash('sha256').update(token).digest('base64url');
  }

  /** The remembered refusal of `token`, if it is recent enough. */
  #refusal(token: string): Refusal | undefined {
    if (this.#refused.size === 0) return undefined;
    const key = this.#tokenKey(token);
    const refusal = this.#refused.get(key);
    if (refusal && refusal.until <= this.#config.now()) {
      this.#refused.delete(key);
      return undefined;
    }
    return refusal;
  }

  #throwIfRefused(applicationId: string, state: AppState, token: string): void {
    const refusal = this.#refusal(token);
    if (refusal) throw this.#refusedError(applicationId, state, refusal.status);
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

  /**
   * What a caller whose token the policy API refused gets: about its token when the API accepts
   * others (so it works), else a 503 that reads as the misconfiguration it most likely is — a
   * policy API refusing every token must not turn into 401 for everyone.
   */
  #refusedError(applicationId: string, state: AppState, status: 401 | 403): TokenRejectedError | PolicyUnavailableError {
    if (this.#acceptedRecently(state)) {
      return new TokenRejectedError(status, status === 401
        ? 'the IAM rejected the token: the policy API answered 401 to it (revoked, or expired at the IAM)'
        : 'the IAM refused the token access to the role policy: the policy API answered 403 to it');
    }
    return new PolicyUnavailableError(
      `the policy API is misconfigured or refuses every token: GET ${this.#config.url} answered HTTP ${status} and no token of application ${applicationId} was accepted lately (check policyUrl / baseUrl, and that the IAM accepts this application's tokens there)`,
      { misconfigured: true },
    );
  }

  #state(applicationId: string): AppState {
    let state = this.#apps.get(applicationId);
    if (!state) {
      state = { cache: new Refresher<PolicyEntry>(this.#config), acceptedAt: undefined, bodyDigest: undefined, lastHint: undefined, pendingHint: undefined, hintSerial: 0 };
      this.#apps.set(applicationId, state);
    }
    return state;
  }

  /**
   * The fetch to wait for: the one running, else a new one unless the spacing forbids it (`urgent`
   * skips the spacing: a cold miss that has not failed yet) or the token was refused a moment ago
   * (a background revalidation then waits for the next caller's token).
   */
  #startFetch(state: AppState, applicationId: string, callerToken: string, urgent: boolean): Promise<FetchOutcome> | undefined {
    const { cache } = state;
    if (cache.running()) return cache.start(() => Promise.resolve(RECORDED), urgent);
    if (this.#refusal(callerToken) !== undefined && this.#config.policyToken === undefined) return undefined;
    const mark = cache.attemptMark();
    return cache.start(() => this.#fetch(state, applicationId, callerToken, mark), urgent);
  }

  /** A hinted revalidation can start now (or one runs): the budget, not the hint, sets the pace. */
  #hintDue(state: AppState): boolean {
    return state.cache.running() || state.cache.mayStart(false);
  }

  /**
   * The API answered a fetch sent when the hint serial was `serial`, with `changeId` now held: a
   * pending hint is answered when no hint came after the fetch was sent (the IAM answered after
   * it), or when the answer names the hint's `changeId`. Otherwise it stands: revalidate again.
   */
  #answered(state: AppState, serial: number, changeId: string): void {
    if (state.pendingHint !== undefined && (state.hintSerial === serial || state.pendingHint === changeId)) state.pendingHint = undefined;
  }

  /** Subscribes to the hint channel once, on first use: construction does no I/O. */
  #subscribe(): void {
    const { hints } = this.#config;
    if (hints === undefined) {
      this.#hints = 'broken';
      return;
    }
    try {
      const unsubscribe = hints.subscribe((hint) => { this.#received(hint); });
      this.#hints = typeof unsubscribe === 'function' ? unsubscribe : () => {};
    } catch {
      // A channel that cannot subscribe leaves the TTL in charge: never a failed request.
      this.#hints = 'broken';
    }
  }

  /** A hint: validated field by field, then at most a reason to revalidate. Never throws. */
  #received(hint: unknown): void {
    try {
      if (typeof this.#hints !== 'function' || typeof hint !== 'object' || hint === null) return;
      const { issuer, application, changeId } = hint as Record<string, unknown>;
      if (!isHintField(issuer) || !isHintField(application) || !isHintField(changeId)) return;
      if (issuer !== this.#config.issuer) return;
      // Only applications cached here; peek leaves the LRU order alone.
      const state = this.#apps.peek(application);
      const held = state?.cache.value?.policy.changeId;
      if (state === undefined || held === undefined) return;
      state.lastHint = changeId;
      // A hint of the changeId held says nothing new, and never cancels a revalidation already due.
      if (changeId === held) return;
      state.pendingHint = changeId;
      state.hintSerial += 1;
      // With the service's own token there is no need to wait for a caller's request.
      if (this.#config.policyToken !== undefined) void this.#startFetch(state, application, '', false);
    } catch {
      // A hint is advice: whatever it is, it must not break the channel's delivery loop.
    }
  }

  /** Tells the fleet of a `changeId` this replica found, once; a publish failure is dropped. */
  #publish(state: AppState, application: string, changeId: string): void {
    const { hints, issuer } = this.#config;
    if (hints === undefined || issuer === undefined || this.#hints === 'closed') return;
    // Already announced (this replica fetched it because of that hint): no echo.
    if (state.lastHint === changeId) return;
    const hint: PolicyHint = { issuer, application, changeId };
    Promise.resolve().then(() => hints.publish(hint)).catch(() => { /* best effort: the TTL still bounds staleness */ });
  }

  /** Never rejects: the outcome is recorded in `state`, or is a refusal of `callerToken`. */
  async #fetch(state: AppState, applicationId: string, callerToken: string, attemptBefore: AttemptMark): Promise<FetchOutcome> {
    const config = this.#config;
    const previous = state.cache.value;
    const serial = state.hintSerial;
    try {
      const token = config.policyToken ? await config.policyToken() : callerToken;
      const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${token}` };
      // Only a changeId that is a valid entity tag (visible ASCII, no '"') is sent: any other
      // character makes undici refuse the header, and every revalidation would fail until the
      // policy is past maxStaleMs. Without the header the API answers 200 and the changeId decides.
      const conditional = previous !== undefined && ETAGC.test(previous.policy.changeId);
      if (conditional) headers['if-none-match'] = `"${previous.policy.changeId}"`;
      const res = await httpGet(config.url, {
        dispatcher: config.dispatcher,
        timeoutMs: config.timeoutMs,
        maxBytes: config.maxBytes,
        headers,
        // A 304 confirms only what was asked about: to a request without If-None-Match it is a
        // broken answer, and a failure (never a reason to serve the policy longer).
        acceptStatuses: conditional ? [304] : [],
        closer: this.#closing,
        expectJson: true,
      });
      state.acceptedAt = config.now();
      if (res.statusCode === 304 && conditional) {
        this.#confirm(state, applicationId, previous, serial, true);
        return RECORDED;
      }
      // Every step below is sliced (hash, decode, parse, check, compile): a policy of 16 MiB holds
      // the event loop for a few ms at a time, never for the whole of it.
      const digest = await sha256Sliced(res.body);
      if (previous && digest === state.bodyDigest) {
        this.#confirm(state, applicationId, previous, serial, false);
        return RECORDED;
      }
      const body = await parseJsonBodySliced(res.body, config.url) as Partial<RolePolicy> | null;
      if (typeof body !== 'object' || body === null || body.applicationId !== applicationId) {
        // The applicationId received is not quoted: no upstream text in messages.
        throw new UpstreamError('malformed', `the policy from ${config.url} is not the one of the token's application`);
      }
      // Validated before the changeId comparison: a malformed answer is a failure even when it
      // repeats the cached changeId, so it can never extend the cached policy's life past maxStaleMs.
      const mistake = await policyMistakeSliced(body, nextTurn);
      if (mistake !== undefined) throw new UpstreamError('malformed', `the policy from ${config.url} is malformed: ${mistake}`);
      if (previous && body.changeId === previous.policy.changeId) {
        state.bodyDigest = digest;
        this.#confirm(state, applicationId, previous, serial, false);
        return RECORDED;
      }
      // Large policies are compiled in slices, so that other applications' requests are not held up.
      const policy = await compilePolicyYielding(body as RolePolicy);
      state.cache.succeeded({ policy, fetchedAt: config.now() });
      // A refused or failed fetch leaves a pending hint standing, so a revoked caller's token cannot
      // make a replica drop it.
      this.#answered(state, serial, policy.changeId);
      state.bodyDigest = digest;
      if (previous) {
        this.#config.onDropped?.(previous.policy, 'replaced');
        this.#publish(state, applicationId, policy.changeId);
        if (policyChanged.hasSubscribers) policyChanged.publish({ applicationId, previousChangeId: previous.policy.changeId, changeId: policy.changeId });
      } else if (policyFetched.hasSubscribers) {
        policyFetched.publish({ applicationId, changeId: policy.changeId });
      }
      return RECORDED;
    } catch (error) {
      const failure = error instanceof UpstreamError ? error : new UpstreamError('network', 'the policy could not be fetched', { cause: error });
      const status = failure.reason === 'status' ? failure.statusCode : undefined;
      if ((status === 401 || status === 403) && config.policyToken === undefined) return this.#refusedFetch(state, applicationId, callerToken, status, attemptBefore, failure);
      // With `policyToken`, a 401/403 refuses the service's own identity: UpstreamError marks it misconfigured.
      state.cache.failed(failure, retryAfterMs(failure, config.now()));
      if (policyFailed.hasSubscribers) policyFailed.publish({ applicationId, reason: failure.reason, misconfigured: failure.misconfigured, error: failure });
      logUpstreamFailure(config.log, 'policy API', config.url, failure);
      return RECORDED;
    }
  }

  /**
   * The policy API refused the caller's own token: remember it briefly, give the spacing budget
   * back (the next caller's token may revalidate at once), and leave the app state alone. When no
   * token of the application was accepted lately, it reads as a misconfiguration in `policy:failed`.
   */
  #refusedFetch(state: AppState, applicationId: string, token: string, status: 401 | 403, attemptBefore: AttemptMark, failure: UpstreamError): FetchOutcome {
    state.cache.forgetAttempt(attemptBefore.lastAttemptAt, attemptBefore.notBefore);
    this.#refused.set(this.#tokenKey(token), { status, until: this.#config.now() + REFUSAL_MEMORY_MS });
    const acceptedRecently = this.#acceptedRecently(state);
    if (policyTokenRefused.hasSubscribers) policyTokenRefused.publish({ applicationId, statusCode: status, acceptedRecently });
    if (!acceptedRecently && policyFailed.hasSubscribers) policyFailed.publish({ applicationId, reason: failure.reason, misconfigured: true, error: failure });
    if (!acceptedRecently) logUpstreamFailure(this.#config.log, 'policy API', this.#config.url, failure);
    return { refused: true, token, status };
  }

  /** The API confirmed the cached policy (304, or the same changeId): keep it compiled, fresh again. */
  #confirm(state: AppState, applicationId: string, previous: PolicyEntry, serial: number, notModified: boolean): void {
    state.cache.succeeded({ policy: previous.policy, fetchedAt: this.#config.now() });
    this.#answered(state, serial, previous.policy.changeId);
    if (policyRevalidated.hasSubscribers) policyRevalidated.publish({ applicationId, changeId: previous.policy.changeId, notModified });
  }

  #unavailable(applicationId: string, state: AppState): never {
    const last = state.cache.lastError as UpstreamError | undefined;
    const misconfigured = last?.misconfigured ?? false;
    const detail = last ? `: ${misconfigured ? 'the policy API is misconfigured (check policyUrl / baseUrl): ' : ''}${last.message}` : '';
    throw new PolicyUnavailableError(`no usable role policy for application ${applicationId}${detail}`, { cause: last, misconfigured });
  }
}

/** SHA-256 of `body`, hashed {@link BYTES_PER_TURN} bytes per turn of the event loop. */
async function sha256Sliced(body: Buffer): Promise<string> {
  const hash = createHash('sha256');
  for (let at = 0; at < body.length; at += BYTES_PER_TURN) {
    if (at > 0) await nextTurn();
    hash.update(body.subarray(at, at + BYTES_PER_TURN));
  }
  return hash.digest('base64url');
}

function isHintField(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_HINT_FIELD;
}
