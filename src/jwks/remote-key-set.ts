/**
 * The JWKS client. Unlike jose's `createRemoteJWKSet`, it keeps verifying with cached keys while
 * the endpoint is down (for `maxStaleMs` after they stopped being fresh, RFC 5861 stale-if-error:
 * until `ttlMs + maxStaleMs` after the last success), refreshes in the background near the end of
 * `ttlMs` (jittered), and limits refetches for unknown kids to one per `minRefreshIntervalMs`,
 * shared by every concurrent request, after a short random delay. The timing rules are the
 * `Refresher`'s, shared with the policy client through `RemoteCopy`.
 */
import type { Dispatcher } from 'undici';
import { JwksUnavailableError, TokenInvalidError } from '../errors.js';
import { jwksFailed, jwksRefreshed } from '../diagnostics.js';
import { Closer } from '../lib/closer.js';
import { httpGet, parseJsonBody, UpstreamError } from '../lib/upstream.js';
import { backgroundWorkAllowed } from '../lib/transport.js';
import { sleep, type RefresherStatus } from '../lib/refresher.js';
import { RemoteCopy } from '../lib/remote-copy.js';
import { changedKids, importJwks, isJwkSetLike, type KeyIndex, type VerificationKey } from './import-jwks.js';
import type { KeySet } from './key-set.js';
import type { Log } from '../lib/logger.js';

export interface RemoteKeySetConfig {
  uri: string;
  dispatcher: Dispatcher;
  algorithms: ReadonlySet<string>;
  ttlMs: number;
  minRefreshIntervalMs: number;
  timeoutMs: number;
  maxStaleMs: number;
  maxBytes: number;
  now: () => number;
  /** Uniform in [0, 1) for the jitter; tests only. Default `Math.random`. */
  random?: () => number;
  /** Called with the kids that disappeared or now name another key, so dependent caches can be dropped. */
  onKeysRemoved?: (kids: readonly string[]) => void;
  /** The authorizer's logger: every failed fetch at `warn` (rate-limited), even while cached keys are served. */
  log?: Log | undefined;
  /** Waits before an unknown-kid refetch; tests only (the property test's fake clock). Default: a timer. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

/** Where one issuer's keys stand (see `Authorizer.status`). */
export interface KeySetStatus extends RefresherStatus {
  /** The key ids held, sorted. */
  keyIds: string[];
}

const EMPTY: KeyIndex = new Map();

export class RemoteKeySet implements KeySet {
  readonly #config: RemoteKeySetConfig;
  readonly #keys: RemoteCopy<KeyIndex>;
  /** A spread-out wait before an unknown-kid refetch, shared by the requests that asked meanwhile. */
  #spreading: Promise<void> | undefined;
  readonly #closing = new Closer();

  constructor(config: RemoteKeySetConfig) {
    this.#config = config;
    this.#keys = new RemoteCopy<KeyIndex>({ ...config, what: 'JWKS', url: config.uri });
  }

  get #index(): KeyIndex {
    return this.#keys.value ?? EMPTY;
  }

  peek(kid: string): readonly VerificationKey[] | undefined {
    if (this.#keys.usable() === undefined) return undefined;
    // Without background work (workerd), a due refresh is the caller's: `resolve` does it.
    if (!backgroundWorkAllowed() && this.#keys.refreshDue()) return undefined;
    void this.touch(); // settles by itself: background work here
    return this.#index.get(kid);
  }

  /**
   * Starts a background refresh when one is due (see `Refresher`). Where no background work is
   * allowed (workerd), does it in the caller's request instead: the promise to wait for.
   */
  touch(): Promise<void> | undefined {
    if (!this.#keys.refreshDue()) return undefined;
    return this.#keys.background(() => this.#fetch(), undefined);
  }

  async resolve(kid: string): Promise<readonly VerificationKey[]> {
    if (this.#keys.usable() === undefined) {
      await this.#refreshOrJoin('needed');
      if (this.#keys.usable() === undefined) throw this.#unavailable();
    } else {
      // Stale keys stay usable if the refresh fails (stale-if-error).
      await this.touch();
    }
    const known = this.#index.get(kid);
    if (known) return known;

    // Unknown kid: perhaps the IAM rotated keys. Every replica sees the new kid at once: wait a
    // short random delay first, so that they do not all ask in the same instant. The token cannot be
    // verified without a fetch: after failures, the shorter cold backoff applies (`wanted`).
    if (!this.#keys.running() && this.#keys.mayStart('wanted')) {
      this.#spreading ??= (this.#config.sleep ?? sleep)(this.#keys.spreadDelayMs()).finally(() => { this.#spreading = undefined; });
      await this.#spreading;
      const meanwhile = this.#index.get(kid);
      if (meanwhile) return meanwhile;
    }
    // Refetch at most once per minRefreshIntervalMs, shared.
    await this.#refreshOrJoin('wanted');
    const after = this.#index.get(kid);
    if (after) return after;
    if (this.#keys.lastError) throw this.#unavailable();
    throw new TokenInvalidError('no key in the JWKS matches the token kid');
  }

  async refetchAfterFailure(kid: string, tried: readonly VerificationKey[]): Promise<readonly VerificationKey[] | undefined> {
    await this.#refreshOrJoin('optional');
    if (this.#keys.usable() === undefined) return undefined;
    const now = this.#index.get(kid);
    return now && now !== tried && now.some((k) => !tried.some((t) => t.thumbprint === k.thumbprint)) ? now : undefined;
  }

  async ready(): Promise<void> {
    if (this.#keys.usable() !== undefined) return;
    await this.#refreshOrJoin('needed');
    if (this.#keys.usable() === undefined) throw this.#unavailable();
  }

  /** Where the keys stand: plain JSON (key ids, never keys). */
  status(): KeySetStatus {
    return { ...this.#keys.status(), keyIds: [...this.#index.keys()].sort() };
  }

  /** Aborts a fetch under way; later fetches fail at once (503). */
  close(): void {
    this.#closing.close();
  }

  /** Starts a fetch unless one is running or the rules forbid it; waits for any running fetch. */
  #refreshOrJoin(kind: 'needed' | 'wanted' | 'optional'): Promise<void> {
    return this.#keys.refreshOrJoin(() => this.#fetch(), kind, undefined);
  }

  /** Never rejects: the outcome is recorded in the instance. */
  async #fetch(): Promise<void> {
    const config = this.#config;
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
      this.#keys.succeeded(index);
      if (removed.length > 0) config.onKeysRemoved?.(removed);
      if (jwksRefreshed.hasSubscribers) jwksRefreshed.publish({ uri: config.uri, keyCount: index.size, removedKids: removed });
    } catch (error) {
      const failure = this.#keys.recordFailure(error, (cause) => new UpstreamError('malformed', 'JWKS could not be used', { cause }));
      if (jwksFailed.hasSubscribers) jwksFailed.publish({ uri: config.uri, reason: failure.reason, misconfigured: failure.misconfigured, error: failure });
    }
  }

  #unavailable(): JwksUnavailableError {
    const { cause: last, misconfigured } = this.#keys.unavailability();
    // "misconfigured" first: a 404 or an HTML page at the jwksUri will not heal by waiting.
    const state = misconfigured ? 'misconfigured (check jwksUri / baseUrl)' : 'unavailable';
    const reason = last ? `: ${last.message}` : '';
    return new JwksUnavailableError(`the JWKS endpoint is ${state}${reason}`, { cause: last, misconfigured });
  }
}
