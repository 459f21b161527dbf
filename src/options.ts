/**
 * `createAuthorizer` options: their documentation, their defaults, and their validation. Every
 * option is checked once, at construction, with a `TypeError` that names it.
 */
import { EnvHttpProxyAgent, type Dispatcher } from 'undici';
import { isJwkSetLike } from './jwks/import-jwks.js';
import { optionChecks } from './lib/option-checks.js';
import { isSupportedAlgorithm } from './token/signature.js';

const { httpUrl, positiveInt, nonNegativeInt, onlyKnown } = optionChecks('createAuthorizer');

/** Tuning of the remote JWKS cache. */
export interface JwksOptions {
  /** After this long (ms) since the last successful fetch, keys are refreshed in the background. Default `600_000` (10 min). */
  cacheMaxAgeMs?: number;
  /** Least time (ms) between two fetches: bounds refetches for unknown `kid`s and retries after a failure. Default `5_000`. */
  cooldownMs?: number;
  /** Total time (ms) for one JWKS fetch: connect, headers and body. Default `5_000`. */
  timeoutMs?: number;
  /** While the endpoint fails, cached keys keep verifying until this long (ms) after the last success. Default `3_600_000` (1 h). */
  maxStaleMs?: number;
  /** Largest JWKS body accepted, in bytes. Default `65_536`. */
  maxBytes?: number;
}

/** A JWK Set given inline: no network is used for keys. */
export interface JwkSet {
  /** The JWKs; only RSA public signing keys are used. */
  keys: readonly object[];
}

/** Tuning of the verified-token cache. */
export interface TokenCacheOptions {
  /** Most tokens kept (LRU). Default `1000`. */
  max?: number;
  /** Longest time (ms) a verified token is served from the cache (never past its `exp`). Default `300_000` (5 min). */
  maxTtlMs?: number;
}

/** Tuning of the role-policy cache (one entry per application). */
export interface PolicyOptions {
  /** How long (ms) a fetched policy is fresh; after that it is served while one background revalidation runs. Default `60_000`. */
  ttlMs?: number;
  /** While the policy API fails, a cached policy is served until this long (ms) after its last successful fetch; then 503. Default `300_000` (5 min). */
  maxStaleMs?: number;
  /** Least time (ms) between two fetches of one application's policy that are not needed to answer: revalidation, refetch after a denial, retry after a failure. Default `5_000`. */
  minRefreshIntervalMs?: number;
  /** Total time (ms) for one policy fetch: connect, headers and body. Default `5_000`. */
  timeoutMs?: number;
  /** Most applications whose policy is kept (LRU). Default `100`. */
  maxApplications?: number;
  /** Largest policy body accepted, in bytes. Default `1_048_576` (1 MiB). */
  maxBytes?: number;
}

/** Options of {@link createAuthorizer}; validated once, with a `TypeError` naming the option. */
export interface AuthorizerOptions {
  /** The IAM's base URL, e.g. `https://iam.example.com`. Needed unless both `issuer` and `jwksUri`/`jwks` are given. */
  baseUrl?: string;
  /** Expected `iss`, compared exactly. Default `${baseUrl}/authentication/v1`. */
  issuer?: string;
  /** Where the signing keys are. Default `${issuer}/.well-known/jwks.json`. */
  jwksUri?: string;
  /** A static JWK Set (no network), or tuning for the remote JWKS cache. Default: remote with the defaults of {@link JwksOptions}. */
  jwks?: JwkSet | JwksOptions;
  /** Accepted tenant id(s), matched against `aud`. Default: any tenant. */
  audience?: string | readonly string[];
  /** Accepted JWS algorithms (RS256, RS384, RS512, PS256, PS384, PS512). Default `['RS256']`. */
  algorithms?: readonly string[];
  /** Accepted token formats (header `cty`), compared exactly. Default `['t1']`. */
  tokenFormats?: readonly string[];
  /** Allowed clock skew (s) when checking `exp` and `nbf`. Default `5`. */
  clockToleranceSec?: number;
  /** Longest token accepted, in bytes; longer ones are refused before any decoding. Default `8192`. */
  maxTokenBytes?: number;
  /** Verified-token cache settings, or `false` to verify every request. Default: on, see {@link TokenCacheOptions}. */
  tokenCache?: TokenCacheOptions | false;
  /** undici Dispatcher for every outgoing request. Default: an `EnvHttpProxyAgent` (honours `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`), closed by `close()`. */
  dispatcher?: Dispatcher;
  /** Clock in ms since the epoch; for tests. Default `Date.now`. */
  now?: () => number;
  /** The policy API (spec §4.2). Default `${baseUrl}/policy/v1/roles`. */
  policyUrl?: string;
  /** Returns a token to authenticate policy requests as this service. Default: the caller's own verified token. */
  policyToken?: () => Promise<string>;
  /** Role-policy cache settings; see {@link PolicyOptions}. */
  policy?: PolicyOptions;
}

export interface ResolvedOptions {
  issuer: string;
  jwksUri: string | undefined;
  staticJwks: { keys: unknown[] } | undefined;
  jwks: Required<JwksOptions>;
  audience: ReadonlySet<string> | undefined;
  algorithms: ReadonlySet<string>;
  tokenFormats: ReadonlySet<string>;
  clockToleranceSec: number;
  maxTokenBytes: number;
  tokenCache: Required<TokenCacheOptions> | false;
  dispatcher: Dispatcher;
  ownsDispatcher: boolean;
  now: () => number;
  baseUrl: string | undefined;
  policyUrl: string | undefined;
  policyToken: (() => Promise<string>) | undefined;
  policy: Required<PolicyOptions>;
}

const KNOWN = new Set<string>([
  'baseUrl', 'issuer', 'jwksUri', 'jwks', 'audience', 'algorithms', 'tokenFormats', 'clockToleranceSec',
  'maxTokenBytes', 'tokenCache', 'dispatcher', 'now', 'policyUrl', 'policyToken', 'policy',
]);

export const DEFAULT_JWKS: Readonly<Required<JwksOptions>> = {
  cacheMaxAgeMs: 600_000,
  cooldownMs: 5_000,
  timeoutMs: 5_000,
  maxStaleMs: 3_600_000,
  maxBytes: 65_536,
};

export const DEFAULT_POLICY: Readonly<Required<PolicyOptions>> = {
  ttlMs: 60_000,
  maxStaleMs: 300_000,
  minRefreshIntervalMs: 5_000,
  timeoutMs: 5_000,
  maxApplications: 100,
  maxBytes: 1_048_576,
};

export function resolveOptions(options: AuthorizerOptions): ResolvedOptions {
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError('createAuthorizer: options must be an object');
  onlyKnown(undefined, options, KNOWN);
  const baseUrl = options.baseUrl === undefined ? undefined : httpUrl('baseUrl', options.baseUrl, 'base').replace(/\/+$/, '');
  const issuer = options.issuer ?? (baseUrl === undefined ? undefined : `${baseUrl}/authentication/v1`);
  if (issuer === undefined) throw new TypeError('createAuthorizer: "baseUrl" or "issuer" is required');
  if (typeof issuer !== 'string' || issuer.length === 0) throw new TypeError('createAuthorizer: "issuer" must be a non-empty string');

  let staticJwks: { keys: unknown[] } | undefined;
  let jwks: Required<JwksOptions> = { ...DEFAULT_JWKS };
  if (options.jwks !== undefined) {
    if (typeof options.jwks !== 'object' || (options.jwks as unknown) === null) throw new TypeError('createAuthorizer: "jwks" must be an object');
    if ('keys' in options.jwks) {
      if (!isJwkSetLike(options.jwks)) throw new TypeError('createAuthorizer: "jwks" has a "keys" member but is not a JWK Set');
      onlyKnown('jwks', options.jwks, ['keys']);
      if (options.jwks.keys.length === 0) throw new TypeError('createAuthorizer: "jwks" is a JWK Set without keys');
      if (options.jwksUri !== undefined) throw new TypeError('createAuthorizer: give either a static "jwks" or "jwksUri", not both');
      staticJwks = options.jwks;
    } else {
      onlyKnown('jwks', options.jwks, Object.keys(DEFAULT_JWKS));
      jwks = {
        cacheMaxAgeMs: positiveInt('jwks.cacheMaxAgeMs', options.jwks.cacheMaxAgeMs, DEFAULT_JWKS.cacheMaxAgeMs),
        cooldownMs: nonNegativeInt('jwks.cooldownMs', options.jwks.cooldownMs, DEFAULT_JWKS.cooldownMs),
        timeoutMs: positiveInt('jwks.timeoutMs', options.jwks.timeoutMs, DEFAULT_JWKS.timeoutMs),
        maxStaleMs: nonNegativeInt('jwks.maxStaleMs', options.jwks.maxStaleMs, DEFAULT_JWKS.maxStaleMs),
        maxBytes: positiveInt('jwks.maxBytes', options.jwks.maxBytes, DEFAULT_JWKS.maxBytes),
      };
      if (jwks.maxStaleMs < jwks.cacheMaxAgeMs) {
        throw new TypeError('createAuthorizer: "jwks.maxStaleMs" must not be shorter than "jwks.cacheMaxAgeMs"');
      }
    }
  }
  const jwksUri = staticJwks ? undefined : httpUrl('jwksUri', options.jwksUri ?? `${issuer}/.well-known/jwks.json`);

  const algorithms = stringList('algorithms', options.algorithms, ['RS256']);
  for (const alg of algorithms) {
    if (!isSupportedAlgorithm(alg)) throw new TypeError(`createAuthorizer: "algorithms" lists "${alg}", which is not supported (RS256, RS384, RS512, PS256, PS384, PS512)`);
  }

  if (options.dispatcher !== undefined && typeof (options.dispatcher as { dispatch?: unknown } | null)?.dispatch !== 'function') {
    throw new TypeError('createAuthorizer: "dispatcher" must be an undici Dispatcher');
  }

  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new TypeError('createAuthorizer: "now" must be a function');

  let tokenCache: Required<TokenCacheOptions> | false = { max: 1000, maxTtlMs: 300_000 };
  if (options.tokenCache === false) tokenCache = false;
  else if (options.tokenCache !== undefined) {
    if (typeof options.tokenCache !== 'object' || (options.tokenCache as unknown) === null) {
      throw new TypeError('createAuthorizer: "tokenCache" must be an object or false');
    }
    onlyKnown('tokenCache', options.tokenCache, ['max', 'maxTtlMs']);
    tokenCache = {
      max: positiveInt('tokenCache.max', options.tokenCache.max, 1000),
      maxTtlMs: positiveInt('tokenCache.maxTtlMs', options.tokenCache.maxTtlMs, 300_000),
    };
  }

  const tolerance = options.clockToleranceSec ?? 5;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0 || tolerance > 300) {
    throw new TypeError('createAuthorizer: "clockToleranceSec" must be a number of seconds from 0 to 300');
  }

  const policyUrl = options.policyUrl === undefined
    ? (baseUrl === undefined ? undefined : `${baseUrl}/policy/v1/roles`)
    : httpUrl('policyUrl', options.policyUrl);
  if (options.policyToken !== undefined && typeof options.policyToken !== 'function') {
    throw new TypeError('createAuthorizer: "policyToken" must be a function returning a Promise of a token');
  }

  const policy = resolvePolicyOptions(options.policy);
  const audience = options.audience === undefined ? undefined : new Set(stringList('audience', typeof options.audience === 'string' ? [options.audience] : options.audience, []));
  const tokenFormats = new Set(stringList('tokenFormats', options.tokenFormats, ['t1']));
  const maxTokenBytes = positiveInt('maxTokenBytes', options.maxTokenBytes, 8192);
  // Created last: nothing after this can throw, so an agent is never left behind unclosed.
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? new EnvHttpProxyAgent();

  return {
    policyUrl,
    policyToken: options.policyToken,
    policy,
    baseUrl,
    issuer,
    jwksUri,
    staticJwks,
    jwks,
    audience,
    algorithms: new Set(algorithms),
    tokenFormats,
    clockToleranceSec: tolerance,
    maxTokenBytes,
    tokenCache,
    dispatcher,
    ownsDispatcher,
    now,
  };
}

function resolvePolicyOptions(policy: PolicyOptions | undefined): Required<PolicyOptions> {
  if (policy === undefined) return { ...DEFAULT_POLICY };
  if (typeof policy !== 'object' || (policy as unknown) === null) throw new TypeError('createAuthorizer: "policy" must be an object');
  onlyKnown('policy', policy, Object.keys(DEFAULT_POLICY));
  const resolved = {
    ttlMs: positiveInt('policy.ttlMs', policy.ttlMs, DEFAULT_POLICY.ttlMs),
    maxStaleMs: nonNegativeInt('policy.maxStaleMs', policy.maxStaleMs, DEFAULT_POLICY.maxStaleMs),
    minRefreshIntervalMs: nonNegativeInt('policy.minRefreshIntervalMs', policy.minRefreshIntervalMs, DEFAULT_POLICY.minRefreshIntervalMs),
    timeoutMs: positiveInt('policy.timeoutMs', policy.timeoutMs, DEFAULT_POLICY.timeoutMs),
    maxApplications: positiveInt('policy.maxApplications', policy.maxApplications, DEFAULT_POLICY.maxApplications),
    maxBytes: positiveInt('policy.maxBytes', policy.maxBytes, DEFAULT_POLICY.maxBytes),
  };
  if (resolved.maxStaleMs < resolved.ttlMs) throw new TypeError('createAuthorizer: "policy.maxStaleMs" must not be shorter than "policy.ttlMs"');
  return resolved;
}

function stringList(name: string, value: unknown, fallback: readonly string[]): string[] {
  if (value === undefined) return [...fallback];
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v.length > 0)) {
    throw new TypeError(`createAuthorizer: "${name}" must be a non-empty array of non-empty strings`);
  }
  return [...(value as string[])];
}
