/**
 * `IamTokenClient`: the caller side of spec §4.1. Exchanges an identity provider token for an IAM
 * token scoped to one tenant, and keeps the answer until shortly before it expires.
 *
 * - one cache entry per (tenantId, expiryInSecs), kept until `exp - margin` (see
 *   {@link IamTokenClientOptions.refreshMarginSec}), in a bounded LRU;
 * - concurrent calls share: N concurrent `getToken` for one key make one exchange, and all
 *   exchanges in flight at once share one pending `idpToken()` call;
 * - nothing failed is kept: the next call tries again;
 * - the issued token is decoded (to read `exp`), never verified: the consuming service verifies.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { TokenExchangeError } from '../errors.js';
import { httpRequest, UpstreamError } from '../lib/upstream.js';
import { refuseNulls } from '../lib/option-checks.js';
import { HEADER_TOKEN, resolveClientOptions, type IamTokenClientOptions, type ResolvedClientOptions } from './options.js';
import { problemSummary, readIssuedToken, type TokenTimes } from './token-answer.js';

/** What {@link IamTokenClient.getToken} is asked for (spec §2.1; `tokenFormat` is always `t1`). */
export interface GetTokenParams {
  /** Tenant the token is issued for; becomes its `aud` and `tid`. */
  readonly tenantId: string;
  /** Time to live of the requested token, in seconds (a positive integer). */
  readonly expiryInSecs: number;
  /**
   * The IdP token of the identity to act for in this call (e.g. the current user's), or a function
   * returning it, instead of the client's own `idpToken` option (the service's identity). The IAM
   * token is cached and shared under a key that includes a SHA-256 hash of this IdP token, so a
   * different identity never receives another's token. Default: the client's `idpToken()`.
   */
  readonly idpToken?: string | (() => Promise<string>);
}

interface CachedToken {
  readonly token: string;
  /** When (ms since the epoch) the token stops being served from the cache. */
  readonly refreshAt: number;
}

/** Longest margin (s) of the default refresh rule `min(60 s, 10% of the lifetime)`. */
const DEFAULT_MAX_MARGIN_SEC = 60;
/** Share of the lifetime used as the default margin, when that is shorter than 60 s. */
const DEFAULT_MARGIN_SHARE = 0.1;
/** Most bytes of an error answer read for its problem details. */
const ERROR_BODY_MAX_BYTES = 4_096;

/**
 * Gets IAM tokens for a tenant by exchanging an identity provider token (spec §4.1), each kept
 * until shortly before it expires and shared by concurrent callers. `close()` releases it.
 */
export class IamTokenClient {
  readonly #config: ResolvedClientOptions;
  readonly #cache: LRUCache<string, CachedToken>;
  readonly #inflight = new Map<string, Promise<string>>();
  #idpPending: Promise<string> | undefined;
  #closed = false;

  /** Throws a `TypeError` naming the option when an option is invalid. */
  constructor(options: IamTokenClientOptions) {
    this.#config = resolveClientOptions(options);
    this.#cache = new LRUCache<string, CachedToken>({ max: this.#config.maxCachedTokens });
  }

  /**
   * An IAM token (compact JWS) for `tenantId` with a time to live of `expiryInSecs`: from the cache
   * while it is fresh, otherwise exchanged per spec §4.1 (shared with concurrent callers).
   *
   * Rejects with a `TypeError` for invalid parameters, and with a {@link TokenExchangeError} whose
   * `status` is:
   * - the IAM's HTTP status when it refused (e.g. 400, 401, 403, 406, 415, 500); `problem` holds
   *   the `title: detail` of a problem+json answer, with anything token-like redacted;
   * - 503 when the IAM could not be reached or did not answer within `timeoutMs`, and after `close()`;
   * - 502 when it answered something that is not a token: a redirect (never followed), a body over
   *   `maxBytes`, or a 2xx body that is not a compact JWS with a numeric `exp`;
   * - 401 when `idpToken()` rejected or resolved with something that is not a bare token, since
   *   there is no IdP credential to present (`cause` holds the callback's error). The IAM is not
   *   contacted then.
   */
  async getToken(params: GetTokenParams): Promise<string> {
    const { tenantId, expiryInSecs, idpToken } = checkParams(params);
    if (this.#closed) throw new TokenExchangeError(503, 'the token client is closed');
    // Another identity's IdP token: its own cache entry, keyed by the token's hash.
    const callerIdp = idpToken === undefined ? undefined : await checkedIdpToken(typeof idpToken === 'string' ? Promise.resolve(idpToken) : callProvider(idpToken));
    if (callerIdp === undefined && !this.#config.idpToken) throw new TypeError('getToken: no "idpToken" given, and the client has no idpToken option');
    const key = cacheKey(expiryInSecs, tenantId, callerIdp);
    const cached = this.#cache.get(key);
    if (cached) {
      if (this.#config.now() < cached.refreshAt) return cached.token;
      this.#cache.delete(key);
    }
    let pending = this.#inflight.get(key);
    if (!pending) {
      const started = this.#exchange(tenantId, expiryInSecs, key, callerIdp).finally(() => {
        if (this.#inflight.get(key) === started) this.#inflight.delete(key);
      });
      this.#inflight.set(key, started);
      pending = started;
    }
    return pending;
  }

  /** Drops every cached token (e.g. after the consuming service rejected one); the next calls exchange again. */
  clear(): void {
    this.#cache.clear();
  }

  /** Drops the cache and closes the dispatcher if this client created it. Later `getToken` calls reject with 503. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#cache.clear();
    if (this.#config.ownsDispatcher) await this.#config.dispatcher.close();
  }

  async #exchange(tenantId: string, expiryInSecs: number, key: string, callerIdp: string | undefined): Promise<string> {
    const config = this.#config;
    const idpToken = callerIdp ?? await this.#sharedIdpToken();
    const what = `token exchange for tenant ${JSON.stringify(tenantId)}`;
    let body: Buffer;
    try {
      ({ body } = await httpRequest(config.tokenUrl, {
        method: 'POST',
        dispatcher: config.dispatcher,
        timeoutMs: config.timeoutMs,
        maxBytes: config.maxBytes,
        errorBodyMaxBytes: ERROR_BODY_MAX_BYTES,
        headers: {
          authorization: `Bearer ${idpToken}`,
          'idp-key': config.idpKey,
          accept: 'application/jwt',
          'content-type': 'application/json',
          'cache-control': 'no-store, no-cache, must-revalidate',
          'if-modified-since': '0',
        },
        body: JSON.stringify({ tenantId, expiryInSecs, tokenFormat: 't1' }),
      }));
    } catch (error) {
      throw exchangeFailure(what, error, idpToken);
    }
    const issued = readIssuedToken(body);
    if ('mistake' in issued) throw new TokenExchangeError(502, `${what} failed: ${issued.mistake}`);
    const refreshAt = this.#refreshAt(issued.times);
    if (!this.#closed && refreshAt > config.now()) this.#cache.set(key, { token: issued.token, refreshAt });
    return issued.token;
  }

  /** `exp - margin` in ms; the margin is `refreshMarginSec`, or `min(60 s, 10% of exp - iat)`. */
  #refreshAt({ exp, iat }: TokenTimes): number {
    const nowSec = this.#config.now() / 1000;
    const lifetimeSec = Math.max(0, iat !== undefined && iat < exp ? exp - iat : exp - nowSec);
    const marginSec = this.#config.refreshMarginSec ?? Math.min(DEFAULT_MAX_MARGIN_SEC, lifetimeSec * DEFAULT_MARGIN_SHARE);
    return (exp - marginSec) * 1000;
  }

  /** One pending `idpToken()` call, shared by every exchange that needs it meanwhile. */
  #sharedIdpToken(): Promise<string> {
    if (this.#idpPending) return this.#idpPending;
    const provider = this.#config.idpToken as () => Promise<string>; // getToken checked it is there
    const shared: Promise<string> = checkedIdpToken(callProvider(provider)).finally(() => {
      if (this.#idpPending === shared) this.#idpPending = undefined;
    });
    this.#idpPending = shared;
    return shared;
  }
}

/**
 * The cache (and in-flight) key of one (expiry, tenant, identity): a JSON array, so that no tenant
 * id, whatever characters it holds, can make one identity's key equal another's (a joined string
 * could: tenant "t:<hash>" of the shared identity vs tenant "t" of a caller's IdP token).
 */
function cacheKey(expiryInSecs: number, tenantId: string, callerIdp: string | undefined): string {
  const identity = callerIdp === undefined ? null : createHash('sha256').update(callerIdp).digest('base64url');
  return JSON.stringify([expiryInSecs, tenantId, identity]);
}

function checkParams(params: GetTokenParams): GetTokenParams {
  if (typeof params !== 'object' || (params as unknown) === null) throw new TypeError('getToken: expects { tenantId, expiryInSecs }');
  refuseNulls('getToken', params, ['tenantId', 'expiryInSecs', 'idpToken']);
  const { tenantId, expiryInSecs, idpToken } = params;
  if (typeof tenantId !== 'string' || tenantId.length === 0) throw new TypeError('getToken: "tenantId" must be a non-empty string');
  if (!Number.isSafeInteger(expiryInSecs) || expiryInSecs <= 0) throw new TypeError('getToken: "expiryInSecs" must be a positive integer');
  if (idpToken !== undefined && typeof idpToken !== 'string' && typeof idpToken !== 'function') {
    throw new TypeError('getToken: "idpToken" must be a string or a function returning a Promise of one');
  }
  return idpToken === undefined ? { tenantId, expiryInSecs } : { tenantId, expiryInSecs, idpToken };
}

/** Calls an IdP-token provider now; a synchronous throw becomes a rejection. */
function callProvider(provider: () => Promise<string>): Promise<unknown> {
  return new Promise<unknown>((resolve) => { resolve(provider()); });
}

/** The IdP token, checked to be a bare header-safe token; any failure is a 401 (no IdP credential to present). */
function checkedIdpToken(value: Promise<unknown>): Promise<string> {
  return value.then(
    (token: unknown) => {
      if (typeof token !== 'string' || !HEADER_TOKEN.test(token)) {
        throw new TokenExchangeError(401, 'the IdP token must be the bare token: a non-empty string of visible ASCII characters, without a "Bearer " prefix');
      }
      return token;
    },
    (error: unknown) => {
      if (error instanceof TokenExchangeError) throw error;
      throw new TokenExchangeError(401, 'idpToken() failed: no IdP token to exchange', { cause: error });
    },
  );
}

/** The `TokenExchangeError` for a failed request. Its message never holds the IdP token or an issued one. */
function exchangeFailure(what: string, error: unknown, idpToken: string): TokenExchangeError {
  const failure = error instanceof UpstreamError ? error : new UpstreamError('network', 'request failed', { cause: error });
  switch (failure.reason) {
    case 'status': {
      const status = failure.statusCode ?? 502;
      const summary = failure.response && problemSummary(failure.response.headers, failure.response.body, [idpToken]);
      // The cause keeps the status, not the raw body: an IAM may echo the IdP token in it.
      const cause = new UpstreamError('status', failure.message, { statusCode: status });
      // The IAM's own words go to `problem`, never into the message: no upstream text in messages.
      return new TokenExchangeError(status, `${what} failed: the IAM answered HTTP ${status}`, { cause, problem: summary });
    }
    case 'network':
    case 'timeout':
      return new TokenExchangeError(503, `${what} failed: the IAM could not be reached (${failure.message})`, { cause: failure });
    case 'redirect':
    case 'oversize':
    case 'malformed':
      return new TokenExchangeError(502, `${what} failed: the IAM's answer was refused (${failure.message})`, { cause: failure });
  }
}
