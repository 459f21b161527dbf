/**
 * The authenticator's options — where the keys are, which tokens are accepted, the token cache —
 * with their documentation, defaults and validation, owned here beside the authenticator.
 */
import { isJwkSetLike } from '../jwks/import-jwks.js';
import { resolveJwksOptions, type JwksOptions } from '../jwks/options.js';
import { authorizerChecks as checks } from '../lib/option-checks.js';
import { warnOnce } from '../lib/warn-once.js';
import type { SharedConfig } from '../shared-options.js';
import { resolveTokenCacheOptions, type TokenCacheOptions } from '../token/cache-options.js';
import { isSupportedAlgorithm } from '../token/signature.js';

const { positiveInt, onlyKnown, perIssuerUrls, stringList } = checks;

/** A JWK Set given inline: no network is used for keys. */
export interface JwkSet {
  /** The JWKs; only RSA public signing keys are used. */
  keys: readonly object[];
}

/** The options of `createAuthorizer` that say which tokens are accepted and how they are verified. */
export interface AuthenticatorOptions {
  /**
   * Where the signing keys are: a URL, or with several issuers a map from issuer to URL (issuers
   * not in it use the default). Each issuer's keys are fetched and cached separately, and a token's
   * key is looked up only in its own issuer's set. Default `${issuer}/.well-known/jwks.json`.
   */
  jwksUri?: string | Readonly<Record<string, string>>;
  /** Tuning of the remote JWKS cache; see {@link JwksOptions}. A local JWK Set is given as `localJwks`. */
  jwks?: JwksOptions;
  /** A local JWK Set `{ keys: [...] }`: the keys are these, no network is used for them. Excludes `jwksUri`. Default: none (remote keys). */
  localJwks?: JwkSet;
  /**
   * Accepted application ids, matched against the token's `app`. A token of another application is
   * refused by `authenticate` (and every guard) with 401 `ERR_TOKEN_INVALID`, before any policy
   * request: foreign traffic can neither make the library fetch nor evict this service's policies.
   * `ready()` can then warm exactly these. Default: any application (set it in production).
   */
  applications?: readonly string[];
  /**
   * Accepted tenant id(s), matched against `aud`. Default: any tenant — with `NODE_ENV=production`,
   * one process warning (`IAM_AUTHZ_NO_AUDIENCE`) says so.
   */
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
  /**
   * Where RSA signatures are checked: `'inline'` on the event loop, or `'threadpool'` in libuv's
   * thread pool (`crypto.verify` with a callback) while fewer than `maxPoolVerifications` are there,
   * inline otherwise. The pool wins when the machine has cores to spare for it and many distinct
   * tokens arrive at once; see the README's Speed section. Default `'inline'`.
   */
  verify?: 'inline' | 'threadpool';
  /** With `verify: 'threadpool'`, most signature checks in the pool at once (more wait no longer than one inline check). Default `16`. */
  maxPoolVerifications?: number;
}

/** The names of {@link AuthenticatorOptions}. */
export const AUTHENTICATOR_OPTIONS: readonly (keyof AuthenticatorOptions)[] = [
  'jwksUri', 'jwks', 'localJwks', 'applications', 'audience', 'algorithms', 'tokenFormats', 'clockToleranceSec',
  'maxTokenBytes', 'tokenCache', 'verify', 'maxPoolVerifications',
];

/** {@link AuthenticatorOptions}, checked and with their defaults. */
export interface AuthenticatorConfig {
  /** issuer → JWKS URL (remote keys), or `undefined` with a local JWK Set. */
  readonly jwksUris: ReadonlyMap<string, string> | undefined;
  readonly localJwks: { keys: unknown[] } | undefined;
  readonly jwks: Required<JwksOptions>;
  readonly applications: ReadonlySet<string> | undefined;
  readonly audience: ReadonlySet<string> | undefined;
  readonly algorithms: ReadonlySet<string>;
  readonly tokenFormats: ReadonlySet<string>;
  readonly clockToleranceSec: number;
  readonly maxTokenBytes: number;
  readonly tokenCache: Required<TokenCacheOptions> | false;
  /** Signature checks allowed in the thread pool at once; 0 with `verify: 'inline'`. */
  readonly poolVerifications: number;
}

export function resolveAuthenticatorOptions(options: AuthenticatorOptions, shared: SharedConfig): AuthenticatorConfig {
  const localJwks = options.localJwks === undefined ? undefined : checkedJwkSet('localJwks', options.localJwks);
  if (localJwks && options.jwksUri !== undefined) checks.fail('give either a local JWK Set or "jwksUri", not both');
  const jwks = resolveJwksOptions(options.jwks, checks);
  const jwksUris = localJwks ? undefined : perIssuerUrls('jwksUri', shared.issuers, options.jwksUri, (issuer) => `${issuer}/.well-known/jwks.json`);
  const algorithms = stringList('algorithms', options.algorithms, ['RS256']);
  for (const alg of algorithms) {
    if (!isSupportedAlgorithm(alg)) checks.fail(`"algorithms" lists "${alg}", which is not supported (RS256, RS384, RS512, PS256, PS384, PS512)`);
  }
  const tokenCache = resolveTokenCacheOptions(options.tokenCache, checks);
  const tolerance = options.clockToleranceSec ?? 5;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0 || tolerance > 300) {
    checks.fail('"clockToleranceSec" must be a number of seconds from 0 to 300');
  }
  const applications = options.applications === undefined ? undefined : new Set(stringList('applications', options.applications, []));
  const audience = options.audience === undefined ? undefined : new Set(stringList('audience', typeof options.audience === 'string' ? [options.audience] : options.audience, []));
  if (audience === undefined && (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.['NODE_ENV'] === 'production') {
    warnOnce('IAM_AUTHZ_NO_AUDIENCE', 'createAuthorizer: no "audience" in production: tokens of every tenant are accepted; set "audience" to the tenant id(s) this service serves');
  }
  const tokenFormats = new Set(stringList('tokenFormats', options.tokenFormats, ['t1']));
  const maxTokenBytes = positiveInt('maxTokenBytes', options.maxTokenBytes, 8192);
  const verify: unknown = options.verify ?? 'inline';
  if (verify !== 'inline' && verify !== 'threadpool') checks.fail('"verify" must be \'inline\' or \'threadpool\'');
  const maxPoolVerifications = positiveInt('maxPoolVerifications', options.maxPoolVerifications, 16);
  return {
    jwksUris,
    localJwks,
    jwks,
    applications,
    audience,
    algorithms: new Set(algorithms),
    tokenFormats,
    clockToleranceSec: tolerance,
    maxTokenBytes,
    tokenCache,
    poolVerifications: verify === 'threadpool' ? maxPoolVerifications : 0,
  };
}

function checkedJwkSet(name: string, value: unknown): { keys: unknown[] } {
  if (typeof value !== 'object' || value === null || !isJwkSetLike(value)) checks.fail(`"${name}" must be a JWK Set ({ keys: [...] })`);
  const set = value;
  onlyKnown(name, set, ['keys']);
  if (set.keys.length === 0) checks.fail(`"${name}" is a JWK Set without keys`);
  return set;
}
