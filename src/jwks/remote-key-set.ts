/**
 * The JWKS client. Unlike jose's `createRemoteJWKSet`, it keeps verifying with cached keys while
 * the endpoint is down (for `maxStaleMs` after they stopped being fresh, RFC 5861 stale-if-error:
 * until `cacheMaxAgeMs + maxStaleMs` after the last success), refreshes in the background once the
 * cache is older than `cacheMaxAgeMs`, and limits refetches for unknown kids to one per
 * `cooldownMs`, shared by every concurrent request.
 */
import type { Dispatcher } from 'undici';
import { JwksUnavailableError, TokenInvalidError } from '../errors.js';
import { jwksFailed, jwksRefreshed } from '../diagnostics.js';
import { Closer } from '../lib/closer.js';
import { httpGet, parseJsonBody, UpstreamError } from '../lib/upstream.js';
import { abandoned, backgroundWorkAllowed, joinShared } from '../lib/transport.js';
import { changedKids, importJwks, isJwkSetLike, type KeyIndex, type VerificationKey } from './import-jwks.js';
import type { KeySet } from './key-set.js';

export interface RemoteKeySetConfig {
  uri: string;
  dispatcher: Dispatcher;
  algorithms: ReadonlySet<string>;
  cacheMaxAgeMs: number;
  cooldownMs: number;
  timeoutMs: number;
  maxStaleMs: number;
  maxBytes: number;
  now: () => number;
  /** Called with the kids that disappeared or now name another key, so dependent caches can be dropped. */
  onKeysRemoved?: (kids: readonly string[]) => void;
}

export class RemoteKeySet implements KeySet {
  readonly #config: RemoteKeySetConfig;
  #index: KeyIndex = new Map();
  #lastSuccessAt: number | undefined;
  #lastAttemptAt: number | undefined;
  #lastError: UpstreamError | undefined;
  #inflight: Promise<void> | undefined;
  /** Fetches started so far; tells the running one from an abandoned one. */
  #fetches = 0;
  readonly #closing = new Closer();

  constructor(config: RemoteKeySetConfig) {
    this.#config = config;
  }

  peek(kid: string): readonly VerificationKey[] | undefined {
    if (this.#lastSuccessAt === undefined) return undefined;
    if (this.#config.now() - this.#lastSuccessAt > this.#config.cacheMaxAgeMs + this.#config.maxStaleMs) return undefined;
    // Without background work (workerd), a due refresh is the caller's: `resolve` does it.
    if (!backgroundWorkAllowed() && this.#refreshDue()) return undefined;
    void this.touch(); // settles by itself: background work here
    return this.#index.get(kid);
  }

  /**
   * Starts a background refresh when the keys are older than `cacheMaxAgeMs`. Where no background
   * work is allowed (workerd), does it in the caller's request instead: the promise to wait for.
   */
  touch(): Promise<void> | undefined {
    if (!this.#refreshDue()) return undefined;
    if (!backgroundWorkAllowed()) return this.#refreshOrJoin();
    this.#refreshInBackground();
    return undefined;
  }

  async resolve(kid: string): Promise<readonly VerificationKey[]> {
    if (!this.#usable()) {
      await this.#refreshOrJoin();
      if (!this.#usable()) throw this.#unavailable();
    } else {
      // Stale keys stay usable if the refresh fails (stale-if-error).
      await this.touch();
    }
    const known = this.#index.get(kid);
    if (known) return known;

    // Unknown kid: perhaps the IAM rotated keys. Refetch at most once per cooldown, shared.
    await this.#refreshOrJoin();
    const after = this.#index.get(kid);
    if (after) return after;
    if (this.#lastError) throw this.#unavailable();
    throw new TokenInvalidError('no key in the JWKS matches the token kid');
  }

  async refetchAfterFailure(kid: string, tried: readonly VerificationKey[]): Promise<readonly VerificationKey[] | undefined> {
    await this.#refreshOrJoin();
    if (!this.#usable()) return undefined;
    const now = this.#index.get(kid);
    return now && now !== tried && now.some((k) => !tried.some((t) => t.thumbprint === k.thumbprint)) ? now : undefined;
  }

  async ready(): Promise<void> {
    if (this.#usable()) return;
    await this.#refreshOrJoin();
    if (!this.#usable()) throw this.#unavailable();
  }

  /** Aborts a fetch under way; later fetches fail at once (503). */
  close(): void {
    this.#closing.close();
  }

  /** True while the cached keys may be used: fetched once, and stale for no longer than `maxStaleMs`. */
  #usable(): boolean {
    return this.#lastSuccessAt !== undefined && this.#config.now() - this.#lastSuccessAt <= this.#config.cacheMaxAgeMs + this.#config.maxStaleMs;
  }

  /** True when the keys are older than `cacheMaxAgeMs` and a fetch may start (or is running). */
  #refreshDue(): boolean {
    return this.#lastSuccessAt !== undefined && this.#config.now() - this.#lastSuccessAt > this.#config.cacheMaxAgeMs && (this.#inflight !== undefined || this.#mayFetch());
  }

  /** Starts a fetch unless one is running or the cooldown forbids it; waits for any running fetch. */
  async #refreshOrJoin(): Promise<void> {
    if (this.#inflight && abandoned(this.#lastAttemptAt, this.#config.now(), this.#config.timeoutMs)) this.#inflight = undefined;
    if (!this.#inflight && this.#mayFetch()) this.#start();
    if (this.#inflight) await joinShared(this.#inflight, this.#config.timeoutMs, undefined);
  }

  #refreshInBackground(): void {
    if (!this.#inflight && this.#mayFetch()) this.#start();
  }

  #mayFetch(): boolean {
    return this.#lastAttemptAt === undefined || this.#config.now() - this.#lastAttemptAt >= this.#config.cooldownMs;
  }

  #start(): void {
    this.#inflight = this.#fetch(++this.#fetches);
  }

  /** Never rejects: the outcome is recorded in the instance. */
  async #fetch(seq: number): Promise<void> {
    const config = this.#config;
    this.#lastAttemptAt = config.now();
    try {
      const res = await httpGet(config.uri, {
        dispatcher: config.dispatcher,
        timeoutMs: config.timeoutMs,
        maxBytes: config.maxBytes,
        headers: { accept: 'application/jwk-set+json, application/json' },
        closer: this.#closing,
        expectJson: true,
      });
      const body = parseJsonBody(res.body, config.uri);
      if (!isJwkSetLike(body)) throw new UpstreamError('malformed', `the body of ${config.uri} is not a JWK Set`);
      const index = await importJwks(body, config.algorithms);
      if (index.size === 0) throw new UpstreamError('malformed', `the JWK Set of ${config.uri} holds no usable RSA signing key`);
      // A kid gone, or now naming another key: what was verified with the old key must go too.
      const removed = changedKids(this.#index, index);
      this.#index = index;
      this.#lastSuccessAt = config.now();
      this.#lastError = undefined;
      if (removed.length > 0) config.onKeysRemoved?.(removed);
      if (jwksRefreshed.hasSubscribers) jwksRefreshed.publish({ uri: config.uri, keyCount: index.size, removedKids: removed });
    } catch (error) {
      const failure = error instanceof UpstreamError ? error : new UpstreamError('malformed', 'JWKS could not be used', { cause: error });
      this.#lastError = failure;
      if (jwksFailed.hasSubscribers) jwksFailed.publish({ uri: config.uri, reason: failure.reason, misconfigured: failure.misconfigured, error: failure });
    } finally {
      // Only if still the running one: an abandoned fetch (workerd) may have been replaced.
      if (this.#fetches === seq) this.#inflight = undefined;
    }
  }

  #unavailable(): JwksUnavailableError {
    const last = this.#lastError;
    const misconfigured = last?.misconfigured ?? false;
    // "misconfigured" first: a 404 or an HTML page at the jwksUri will not heal by waiting.
    const state = misconfigured ? 'misconfigured (check jwksUri / baseUrl)' : 'unavailable';
    const reason = last ? `: ${last.message}` : '';
    return new JwksUnavailableError(`the JWKS endpoint is ${state}${reason}`, { cause: last, misconfigured });
  }
}
