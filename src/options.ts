/**
 * `createAuthorizer` options: their documentation, their defaults, and their validation. Every
 * option is checked once, at construction, with a `TypeError` that names it.
 */
import type { Dispatcher } from 'undici';
import type { DecisionEvent } from './decision-log.js';
import { isJwkSetLike } from './jwks/import-jwks.js';
import { resolveJwksOptions, type JwksOptions } from './jwks/options.js';
import { optionChecks } from './lib/option-checks.js';
import { isArray } from './lib/is-array.js';
import { lazyProxyAgent } from './lib/undici.js';
import { warnOnce } from './lib/warn-once.js';
import { resolvePolicyOptions, type PolicyOptions } from './policy/options.js';
import { resolveTokenCacheOptions, type TokenCacheOptions } from './token/cache-options.js';
import { isSupportedAlgorithm } from './token/signature.js';

export type { JwksOptions, PolicyOptions, TokenCacheOptions };

const checks = optionChecks('createAuthorizer');
const { httpUrl, positiveInt, onlyKnown } = checks;

/** A JWK Set given inline: no network is used for keys. */
export interface JwkSet {
  /** The JWKs; only RSA public signing keys are used. */
  keys: readonly object[];
}

/** Options of {@link createAuthorizer}; validated once, with a `TypeError` naming the option. */
export interface AuthorizerOptions {
  /** The IAM's base URL, e.g. `https://iam.example.com`. Needed unless both `issuer` and `jwksUri`/`jwks` are given. */
  baseUrl?: string;
  /**
   * Expected `iss`, compared exactly; a list accepts several (IAM migrations, regional deployments).
   * Default `${baseUrl}/authentication/v1`.
   */
  issuer?: string | readonly string[];
  /**
   * Where the signing keys are: a URL, or with several issuers a map from issuer to URL (issuers
   * not in it use the default). Each issuer's keys are fetched and cached separately, and a token's
   * key is looked up only in its own issuer's set. Default `${issuer}/.well-known/jwks.json`.
   */
  jwksUri?: string | Readonly<Record<string, string>>;
  /** Tuning of the remote JWKS cache; see {@link JwksOptions}. (A JWK Set here is the deprecated spelling of `localJwks`.) */
  jwks?: JwksOptions | JwkSet;
  /** A local JWK Set `{ keys: [...] }`: the keys are these, no network is used for them. Excludes `jwksUri`. Default: none (remote keys). */
  localJwks?: JwkSet;
  /**
   * Accepted application ids, matched against the token's `app`. A token of another application is
   * refused by `authenticate` (and every guard) with 401 `ERR_TOKEN_INVALID`, before any policy
   * request: foreign traffic can neither make the library fetch nor evict this service's policies.
   * `ready()` can then warm exactly these. Default: any application (set it in production).
   */
  applications?: readonly string[];
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
  /**
   * undici Dispatcher for every outgoing request. Default: an `EnvHttpProxyAgent` (honours `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`), closed by `close()`.
   * Ignored on Cloudflare Workers, where requests go through the platform `fetch`.
   */
  dispatcher?: Dispatcher;
  /** Clock in ms since the epoch; for tests. Default `Date.now`. */
  now?: () => number;
  /**
   * The policy API (spec §4.2): a URL, or with several issuers a map from issuer to URL. Policies
   * are cached per issuer and application, and a token's policy is fetched only from its own
   * issuer's URL. Default, per issuer: `${baseUrl}/policy/v1/roles` for the issuer of `baseUrl`
   * (and for a single issuer), else `${base}/policy/v1/roles` for an issuer `${base}/authentication/v1`;
   * an issuer of another shape has no policy API unless the map names it (its decisions are a 503).
   */
  policyUrl?: string | Readonly<Record<string, string>>;
  /** Returns a token to authenticate policy requests as this service. Default: the caller's own verified token. */
  policyToken?: () => Promise<string>;
  /** Role-policy cache settings; see {@link PolicyOptions}. */
  policy?: PolicyOptions;
  /**
   * Default mode of every route guard made with this authorizer: `'enforce'` (a denial is a 403) or
   * `'report'` (a denial is logged with `shadow: true` and the request proceeds; a missing, invalid
   * or expired token is still a 401 and an outage still a 503). Adapters and routes may set their
   * own. `authorize` itself never enforces. Default `'enforce'`.
   */
  mode?: 'enforce' | 'report';
  /**
   * Where RSA signatures are checked: `'inline'` on the event loop, or `'threadpool'` in libuv's
   * thread pool (`crypto.verify` with a callback) while fewer than `maxPoolVerifications` are there,
   * inline otherwise. The pool wins when the machine has cores to spare for it and many distinct
   * tokens arrive at once; see the README's Speed section. Default `'inline'`.
   */
  verify?: 'inline' | 'threadpool';
  /** With `verify: 'threadpool'`, most signature checks in the pool at once (more wait no longer than one inline check). Default `16`. */
  maxPoolVerifications?: number;
  /**
   * Called with a `DecisionEvent` for every grant (sampled) and denial. May be `async`; its result is
   * not awaited. If it throws or rejects, the request is answered as if it did not exist, and one
   * process warning (`IAM_AUTHZ_ON_DECISION_THREW`) says so, however often it fails. Default: none.
   */
  onDecision?: (event: DecisionEvent) => void | Promise<void>;
  /** Share of grants logged to `onDecision` and `iam-authz:decision`, from 0 to 1; denials are always logged. Default `1`. */
  decisionSampleRate?: number;
}

export interface ResolvedOptions {
  /** The accepted issuers, in the order given. */
  issuers: readonly string[];
  /** issuer → JWKS URL (remote keys), or `undefined` with a local JWK Set. */
  jwksUris: ReadonlyMap<string, string> | undefined;
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
  /** issuer → its policy API; an issuer without one has no entry. */
  policyUrls: ReadonlyMap<string, string>;
  applications: ReadonlySet<string> | undefined;
  policyToken: (() => Promise<string>) | undefined;
  policy: Required<PolicyOptions>;
  mode: 'enforce' | 'report';
  /** Signature checks allowed in the thread pool at once; 0 with `verify: 'inline'`. */
  poolVerifications: number;
  onDecision: ((event: DecisionEvent) => void | Promise<void>) | undefined;
  decisionSampleRate: number;
}

const KNOWN = new Set<string>([
  'baseUrl', 'issuer', 'jwksUri', 'jwks', 'localJwks', 'audience', 'algorithms', 'tokenFormats', 'clockToleranceSec',
  'maxTokenBytes', 'tokenCache', 'dispatcher', 'now', 'policyUrl', 'policyToken', 'policy', 'mode', 'onDecision',
  'decisionSampleRate', 'verify', 'maxPoolVerifications', 'applications',
]);

export function resolveOptions(options: AuthorizerOptions): ResolvedOptions {
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError('createAuthorizer: options must be an object');
  onlyKnown(undefined, options, KNOWN);
  const baseUrl = options.baseUrl === undefined ? undefined : httpUrl('baseUrl', options.baseUrl, 'base').replace(/\/+$/, '');
  const issuerOption: unknown = options.issuer ?? (baseUrl === undefined ? undefined : `${baseUrl}/authentication/v1`);
  if (issuerOption === undefined) throw new TypeError('createAuthorizer: "baseUrl" or "issuer" is required');
  const issuers = typeof issuerOption === 'string' ? [issuerOption] : issuerOption;
  if (!isArray(issuers) || (issuers as unknown[]).length === 0 || !(issuers as unknown[]).every((i) => typeof i === 'string' && i.length > 0)) {
    throw new TypeError('createAuthorizer: "issuer" must be a non-empty string or a non-empty array of them');
  }

  let staticJwks: { keys: unknown[] } | undefined;
  let jwksTuning = options.jwks as JwksOptions | undefined;
  if (options.jwks !== undefined && (typeof options.jwks !== 'object' || (options.jwks as unknown) === null)) {
    throw new TypeError('createAuthorizer: "jwks" must be an object');
  }
  if (options.jwks !== undefined && 'keys' in options.jwks) {
    // `jwks` used to mean two things, told apart by `keys`: the key set now has its own option.
    warnOnce('IAM_AUTHZ_DEP_JWKS_KEYS', 'createAuthorizer: a JWK Set in "jwks" is deprecated; pass it as "localJwks" ("jwks" is the remote cache\'s tuning)', 'DeprecationWarning');
    if (options.localJwks !== undefined) throw new TypeError('createAuthorizer: give the JWK Set as "localJwks" only, not also in "jwks"');
    staticJwks = checkedJwkSet('jwks', options.jwks);
    jwksTuning = undefined;
  }
  if (options.localJwks !== undefined) staticJwks = checkedJwkSet('localJwks', options.localJwks);
  if (staticJwks && options.jwksUri !== undefined) throw new TypeError('createAuthorizer: give either a local JWK Set or "jwksUri", not both');
  const jwks = resolveJwksOptions(jwksTuning, checks);
  const jwksUris = staticJwks ? undefined : resolveJwksUris(issuers as string[], options.jwksUri);

  const algorithms = stringList('algorithms', options.algorithms, ['RS256']);
  for (const alg of algorithms) {
    if (!isSupportedAlgorithm(alg)) throw new TypeError(`createAuthorizer: "algorithms" lists "${alg}", which is not supported (RS256, RS384, RS512, PS256, PS384, PS512)`);
  }

  if (options.dispatcher !== undefined && typeof (options.dispatcher as { dispatch?: unknown } | null)?.dispatch !== 'function') {
    throw new TypeError('createAuthorizer: "dispatcher" must be an undici Dispatcher');
  }

  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new TypeError('createAuthorizer: "now" must be a function');

  const tokenCache = resolveTokenCacheOptions(options.tokenCache, checks);

  const tolerance = options.clockToleranceSec ?? 5;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0 || tolerance > 300) {
    throw new TypeError('createAuthorizer: "clockToleranceSec" must be a number of seconds from 0 to 300');
  }

  const policyUrls = resolvePolicyUrls(issuers as string[], baseUrl, options.policyUrl);
  const applications = options.applications === undefined ? undefined : new Set(stringList('applications', options.applications, []));
  if (options.policyToken !== undefined && typeof options.policyToken !== 'function') {
    throw new TypeError('createAuthorizer: "policyToken" must be a function returning a Promise of a token');
  }

  if (options.policy !== undefined && (typeof options.policy !== 'object' || isArray(options.policy))) checks.fail('"policy" must be an object');
  const policy = resolvePolicyOptions(options.policy, checks);
  const audience = options.audience === undefined ? undefined : new Set(stringList('audience', typeof options.audience === 'string' ? [options.audience] : options.audience, []));
  const tokenFormats = new Set(stringList('tokenFormats', options.tokenFormats, ['t1']));
  const maxTokenBytes = positiveInt('maxTokenBytes', options.maxTokenBytes, 8192);
  const mode: unknown = options.mode ?? 'enforce';
  if (mode !== 'enforce' && mode !== 'report') throw new TypeError('createAuthorizer: "mode" must be \'enforce\' or \'report\'');
  if (options.onDecision !== undefined && typeof options.onDecision !== 'function') throw new TypeError('createAuthorizer: "onDecision" must be a function');
  const decisionSampleRate = options.decisionSampleRate ?? 1;
  if (typeof decisionSampleRate !== 'number' || !(decisionSampleRate >= 0 && decisionSampleRate <= 1)) {
    throw new TypeError('createAuthorizer: "decisionSampleRate" must be a number from 0 to 1');
  }
  const verify: unknown = options.verify ?? 'inline';
  if (verify !== 'inline' && verify !== 'threadpool') throw new TypeError('createAuthorizer: "verify" must be \'inline\' or \'threadpool\'');
  const maxPoolVerifications = positiveInt('maxPoolVerifications', options.maxPoolVerifications, 16);
  // Created last: nothing after this can throw, so an agent is never left behind unclosed.
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? lazyProxyAgent();

  return {
    policyUrls,
    applications,
    policyToken: options.policyToken,
    policy,
    baseUrl,
    issuers: [...new Set(issuers as string[])],
    jwksUris,
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
    mode,
    poolVerifications: verify === 'threadpool' ? maxPoolVerifications : 0,
    onDecision: options.onDecision,
    decisionSampleRate,
  };
}

/** issuer → its JWKS URL: one URL (a single issuer), a map (issuers not in it use the default), or the default for each. */
function resolveJwksUris(issuers: readonly string[], option: unknown): Map<string, string> {
  const uris = new Map<string, string>();
  if (typeof option === 'string') {
    if (issuers.length > 1) throw new TypeError('createAuthorizer: with several issuers, "jwksUri" must map each issuer to its URL');
    uris.set(issuers[0] as string, httpUrl('jwksUri', option));
    return uris;
  }
  if (option !== undefined && (typeof option !== 'object' || option === null || isArray(option))) {
    throw new TypeError('createAuthorizer: "jwksUri" must be a URL or a map from issuer to URL');
  }
  const map = (option ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(map)) {
    if (!issuers.includes(key)) throw new TypeError(`createAuthorizer: "jwksUri" names "${key}", which is not an accepted issuer`);
  }
  for (const issuer of issuers) {
    uris.set(issuer, httpUrl(`jwksUri["${issuer}"]`, Object.hasOwn(map, issuer) ? map[issuer] : `${issuer}/.well-known/jwks.json`));
  }
  return uris;
}

const ISSUER_PATH = '/authentication/v1';

/**
 * issuer → its policy API. A string serves a single issuer; a map names issuers. The default is
 * derived from `baseUrl` for its own issuer (and for a lone issuer, as before), else from an issuer
 * of the IAM's shape (`${base}/authentication/v1` → `${base}/policy/v1/roles`): never another
 * issuer's URL, so that a policy from one IAM cannot decide the token of another.
 */
function resolvePolicyUrls(issuers: readonly string[], baseUrl: string | undefined, option: unknown): Map<string, string> {
  const urls = new Map<string, string>();
  if (typeof option === 'string') {
    if (issuers.length > 1) throw new TypeError('createAuthorizer: with several issuers, "policyUrl" must map each issuer to its URL');
    urls.set(issuers[0] as string, httpUrl('policyUrl', option));
    return urls;
  }
  if (option !== undefined && (typeof option !== 'object' || option === null || isArray(option))) {
    throw new TypeError('createAuthorizer: "policyUrl" must be a URL or a map from issuer to URL');
  }
  const map = (option ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(map)) {
    if (!issuers.includes(key)) throw new TypeError(`createAuthorizer: "policyUrl" names "${key}", which is not an accepted issuer`);
  }
  for (const issuer of issuers) {
    if (Object.hasOwn(map, issuer)) {
      urls.set(issuer, httpUrl(`policyUrl["${issuer}"]`, map[issuer]));
    } else if (baseUrl !== undefined && (issuers.length === 1 || issuer === `${baseUrl}${ISSUER_PATH}`)) {
      urls.set(issuer, `${baseUrl}/policy/v1/roles`);
    } else if (issuer.endsWith(ISSUER_PATH) && isHttpUrl(issuer)) {
      urls.set(issuer, `${issuer.slice(0, -ISSUER_PATH.length)}/policy/v1/roles`);
    }
  }
  return urls;
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol, username, password } = new URL(value);
    return (protocol === 'https:' || protocol === 'http:') && !username && !password;
  } catch {
    return false;
  }
}

function checkedJwkSet(name: string, value: unknown): { keys: unknown[] } {
  if (typeof value !== 'object' || value === null || !isJwkSetLike(value)) throw new TypeError(`createAuthorizer: "${name}" must be a JWK Set ({ keys: [...] })`);
  onlyKnown(name, value, ['keys']);
  if (value.keys.length === 0) throw new TypeError(`createAuthorizer: "${name}" is a JWK Set without keys`);
  return value;
}

function stringList(name: string, value: unknown, fallback: readonly string[]): string[] {
  if (value === undefined) return [...fallback];
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v.length > 0)) {
    throw new TypeError(`createAuthorizer: "${name}" must be a non-empty array of non-empty strings`);
  }
  return [...(value as string[])];
}
