/**
 * `IamTokenClient` options: their documentation, their defaults, and their validation. Every
 * option is checked once, at construction, with a `TypeError` that names it.
 */
import type { Dispatcher } from 'undici';
import { lazyProxyAgent } from '../lib/undici.js';
import { optionChecks } from '../lib/option-checks.js';

/** Options of {@link IamTokenClient}; validated by its constructor. */
export interface IamTokenClientOptions {
  /**
   * The IAM's base URL, e.g. `https://iam.example.com` (http or https, no credentials; trailing
   * slashes are dropped). Tokens are requested from `${baseUrl}/authentication/v1/tokens`. Required.
   */
  baseUrl: string;
  /** Sent as the `idp-key` header: names the IdP configuration entry the IAM validates the IdP token against. Required. */
  idpKey: string;
  /**
   * Returns the **service's own** identity provider token, without the `Bearer ` prefix. Called once
   * per exchange (concurrent exchanges share one pending call), never for a request served from the
   * cache; this client keeps the IdP token no longer than one exchange, so cache it in the callback
   * if getting one is costly. Tokens obtained with it are cached per (tenant, expiry) and shared by
   * every caller, so never return a *user's* token here: pass that to `getToken({ idpToken })`.
   * Default: none — then every `getToken` call must pass its own `idpToken`.
   */
  idpToken?: () => Promise<string>;
  /** undici Dispatcher for the exchange requests. Default: an `EnvHttpProxyAgent` (honours `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`), closed by `close()`. */
  dispatcher?: Dispatcher;
  /** Total time (ms) for one exchange request to the IAM: connect, headers and body (the `idpToken()` call is not counted). Default `10_000`. */
  timeoutMs?: number;
  /** Largest token answer accepted, in bytes. Default `16_384`. */
  maxBytes?: number;
  /**
   * A cached token is replaced this many seconds before its `exp`. Default: `min(60, 10% of the
   * token's lifetime)` seconds, the lifetime being `exp - iat` (so 60 s for a one-hour token, 30 s
   * for a five-minute one). A margin not shorter than the lifetime disables caching.
   */
  refreshMarginSec?: number;
  /** Most tokens kept, one per (tenantId, expiryInSecs) pair (LRU). Default `100`. */
  maxCachedTokens?: number;
  /** Clock in ms since the epoch; for tests. Default `Date.now`. */
  now?: () => number;
}

export interface ResolvedClientOptions {
  tokenUrl: string;
  idpKey: string;
  idpToken: (() => Promise<string>) | undefined;
  dispatcher: Dispatcher;
  ownsDispatcher: boolean;
  timeoutMs: number;
  maxBytes: number;
  refreshMarginSec: number | undefined;
  maxCachedTokens: number;
  now: () => number;
}

export const DEFAULT_CLIENT_OPTIONS = {
  timeoutMs: 10_000,
  maxBytes: 16_384,
  maxCachedTokens: 100,
} as const;

const KNOWN = new Set<string>([
  'baseUrl', 'idpKey', 'idpToken', 'dispatcher', 'timeoutMs', 'maxBytes', 'refreshMarginSec', 'maxCachedTokens', 'now',
]);

/** Visible ASCII only: what may go into a header value without being rejected or smuggling a line. */
export const HEADER_TOKEN = /^[\x21-\x7e]+$/;

const PREFIX = 'IamTokenClient';
const { httpUrl, positiveInt, onlyKnown } = optionChecks(PREFIX);


export function resolveClientOptions(options: IamTokenClientOptions): ResolvedClientOptions {
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError(`${PREFIX}: options must be an object`);
  onlyKnown(undefined, options, KNOWN);
  const baseUrl = httpUrl('baseUrl', options.baseUrl, 'base').replace(/\/+$/, '');

  const { idpKey } = options;
  if (typeof idpKey !== 'string' || !HEADER_TOKEN.test(idpKey)) {
    throw new TypeError(`${PREFIX}: "idpKey" must be a non-empty string of visible ASCII characters`);
  }
  if (options.idpToken !== undefined && typeof options.idpToken !== 'function') {
    throw new TypeError(`${PREFIX}: "idpToken" must be a function returning a Promise of the IdP token`);
  }

  let dispatcher = options.dispatcher;
  if (dispatcher !== undefined && typeof (dispatcher as { dispatch?: unknown } | null)?.dispatch !== 'function') {
    throw new TypeError(`${PREFIX}: "dispatcher" must be an undici Dispatcher`);
  }

  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new TypeError(`${PREFIX}: "now" must be a function`);

  const { refreshMarginSec } = options;
  if (refreshMarginSec !== undefined && (typeof refreshMarginSec !== 'number' || !Number.isFinite(refreshMarginSec) || refreshMarginSec < 0)) {
    throw new TypeError(`${PREFIX}: "refreshMarginSec" must be a non-negative number of seconds`);
  }

  const resolved = {
    tokenUrl: `${baseUrl}/authentication/v1/tokens`,
    idpKey,
    idpToken: options.idpToken,
    timeoutMs: positiveInt('timeoutMs', options.timeoutMs, DEFAULT_CLIENT_OPTIONS.timeoutMs),
    maxBytes: positiveInt('maxBytes', options.maxBytes, DEFAULT_CLIENT_OPTIONS.maxBytes),
    refreshMarginSec,
    maxCachedTokens: positiveInt('maxCachedTokens', options.maxCachedTokens, DEFAULT_CLIENT_OPTIONS.maxCachedTokens),
    now,
  };
  // Created last, so that a rejected option never leaves an agent behind.
  const ownsDispatcher = dispatcher === undefined;
  dispatcher ??= lazyProxyAgent();
  return { ...resolved, dispatcher, ownsDispatcher };
}

