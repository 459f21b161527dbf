/**
 * The development IAM without a network: its configuration, signing keys, `mintToken`, the policy
 * of an application, the token exchange (spec §4.1) and the policy lookup (§4.2), all on an
 * injectable clock. `dev-iam.ts` wraps it in a `node:http` server that routes requests here, as
 * jose's remote key set wraps its local one; tests can drive it with no socket at all.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWK, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { DevIamConfigError, validateConfig, type ApplicationConfig, type DevIamConfig, type IdpConfig } from './config.js';
import { loadOrCreateKeys, saveKeys, type DevKeys } from './key-file.js';
import type { RolePolicy } from './policy.js';
import { generateSigningKey, signJwt, type SigningKey } from './sign-jwt.js';

/** Longest token lifetime the token endpoint issues, in seconds (24 h). */
export const MAX_EXPIRY_SEC = 86_400;
/** `aud` of the tokens the built-in IdP issues. */
export const DEV_IDP_AUDIENCE = 'iam-authz-dev';
const IDP_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

export interface DevIamCoreOptions {
  /** The configuration, or the path of a JSON file holding it. Validated; errors name the bad field's path. */
  config: DevIamConfig | string;
  /** `iss` of the IAM tokens, e.g. `http://127.0.0.1:4000/authentication/v1`. */
  issuer: string;
  /** `iss` of the built-in IdP's tokens, e.g. `http://127.0.0.1:4000/dev-idp`. */
  devIdpIssuer: string;
  /** The signing keys to start with. Default: read from (or created in) `keyFile` when given, else new keys. */
  keys?: DevKeys | undefined;
  /** A file for the signing keys (see `StartDevIamOptions.keyFile`): rotations are saved to it. Default: none. */
  keyFile?: string | undefined;
  /** The clock, in milliseconds since the epoch: `iat`/`exp` of minted tokens and the expiry checks of presented ones. Default `Date.now`. */
  now?: () => number;
}

export interface MintTokenOptions {
  /** Actor id (becomes `sub`). */
  actor: string;
  /** Tenant id; becomes `aud` and `tid`. */
  tenantId: string;
  /** Lifetime in seconds. Default `3600`. */
  expiryInSecs?: number;
  /** Access references; default: the actor's for `tenantId`. */
  ars?: unknown;
  /** Claims to add or override (e.g. a past `exp`). */
  claims?: Record<string, unknown>;
  /** Header parameters to add or override (e.g. another `kid` or `cty`). */
  header?: Record<string, unknown>;
}

/** A refusal, as the HTTP layer will write it: status, problem detail and extra headers. */
export interface DevIamProblem {
  readonly status: 400 | 401 | 403 | 404 | 413;
  readonly detail: string;
  readonly headers?: Record<string, string>;
}

/** What the token exchange was given: the request's credentials and a way to read its JSON body. */
export interface TokenExchangeRequest {
  /** The Bearer token of `Authorization`, or `undefined` when there is none. */
  idpToken: string | undefined;
  /** The `idp-key` header, or `undefined`. */
  idpKey: string | undefined;
  /** Reads and parses the body; called only once the headers passed. Rejects with a {@link BodyProblemError} to answer with its problem (e.g. 413). */
  readBody: () => Promise<unknown>;
}

export interface DevIamCore {
  readonly issuer: string;
  readonly devIdpIssuer: string;
  /** The configuration in force. */
  readonly config: () => DevIamConfig;
  /** Signs an IAM token directly; overrides allow expired or malformed tokens on purpose. */
  readonly mintToken: (options: MintTokenOptions) => string;
  /** Signs an IdP token with the built-in IdP's key. */
  readonly mintIdpToken: (subject: string, expiryInSecs?: number) => string;
  /** Replaces the configuration; a bad one throws and the old one stays. */
  readonly setConfig: (config: DevIamConfig | string) => void;
  /** Starts signing with a new key; the previous one stays in the JWKS until the next rotation. Returns the new kid. */
  readonly rotateKeys: () => string;
  /** The current role policy of an application, as the policy API serves it. */
  readonly policyOf: (applicationId: string) => RolePolicy | undefined;
  /** The public JWKS of the IAM's signing keys. */
  readonly jwks: () => { keys: JWK[] };
  /** The public JWKS of the built-in IdP. */
  readonly idpJwks: () => { keys: JWK[] };
  /** Whether the configuration names the built-in IdP. */
  readonly hasBuiltinIdp: () => boolean;
  /** The token exchange (spec §4.1) after the HTTP checks: the new IAM token, or why not. */
  readonly exchangeToken: (request: TokenExchangeRequest) => Promise<{ token: string } | DevIamProblem>;
  /** The policy API (spec §4.2): the policy of the presented IAM token's application, or why not. */
  readonly policyForToken: (token: string | undefined) => Promise<{ policy: RolePolicy } | DevIamProblem>;
}

type IdpVerifier = (token: string) => Promise<JWTPayload>;

export function createDevIamCore(options: DevIamCoreOptions): DevIamCore {
  const now = options.now ?? Date.now;
  const { issuer, devIdpIssuer, keyFile } = options;
  let config = loadDevIamConfig(options.config);
  const initial = options.keys ?? (keyFile === undefined ? { keys: [generateSigningKey()], idpKey: generateSigningKey() } : loadOrCreateKeys(keyFile));
  let keys: SigningKey[] = initial.keys;
  const { idpKey } = initial;
  let idpVerifiers = buildIdpVerifiers(config.idps);
  const nowSec = (): number => Math.floor(now() / 1000);

  function buildIdpVerifiers(idps: IdpConfig[]): Map<string, IdpVerifier> {
    const map = new Map<string, IdpVerifier>();
    for (const idp of idps) {
      if ('builtin' in idp) {
        const keySet = createLocalJWKSet({ keys: [idpKey.jwk] });
        // An IdP token must expire: `exp` is required (jose checks it when present, and only then).
        map.set(idp.key, async (token) => (await jwtVerify(token, keySet, {
          issuer: devIdpIssuer, audience: DEV_IDP_AUDIENCE, algorithms: ['RS256'], requiredClaims: ['exp'], currentDate: new Date(now()),
        })).payload);
        continue;
      }
      const keySet: JWTVerifyGetKey = idp.jwks ? createLocalJWKSet(idp.jwks) : createRemoteJWKSet(new URL(idp.jwksUri as string));
      const audience = idp.audience;
      map.set(idp.key, async (token) => (await jwtVerify(token, keySet, {
        issuer: idp.issuer, algorithms: IDP_ALGORITHMS, requiredClaims: ['exp'], currentDate: new Date(now()), ...(audience ? { audience } : {}),
      })).payload);
    }
    return map;
  }

  function policyOf(applicationId: string): RolePolicy | undefined {
    const app = config.applications.find((a) => a.id === applicationId);
    return app ? toPolicy(app) : undefined;
  }

  function mintToken(opts: MintTokenOptions): string {
    const actor = config.actors.find((a) => a.id === opts.actor);
    if (!actor) throw new TypeError(`mintToken: no actor "${opts.actor}"`);
    const iat = nowSec();
    const ars = opts.ars ?? (Object.hasOwn(actor.tenants, opts.tenantId) ? actor.tenants[opts.tenantId] : []);
    const payload = {
      jti: randomUUID(), iss: issuer, sub: actor.id, aud: opts.tenantId, exp: iat + (opts.expiryInSecs ?? 3600), iat,
      acc: actor.account, app: actor.application, tid: opts.tenantId, ars, ...opts.claims,
    };
    const current = keys[0] as SigningKey;
    return signJwt(payload, current, { alg: 'RS256', kid: current.kid, cty: 't1', ...opts.header });
  }

  function mintIdpToken(subject: string, expiryInSecs = 3600): string {
    const iat = nowSec();
    return signJwt({ iss: devIdpIssuer, sub: subject, aud: DEV_IDP_AUDIENCE, iat, exp: iat + expiryInSecs, jti: randomUUID() }, idpKey);
  }

  async function exchangeToken(request: TokenExchangeRequest): Promise<{ token: string } | DevIamProblem> {
    const { idpToken, idpKey: idpKeyName } = request;
    if (idpToken === undefined) return { status: 401, detail: 'authorization must carry the IdP token as a Bearer token', headers: { 'www-authenticate': 'Bearer realm="iam"' } };
    if (idpKeyName === undefined || idpKeyName.length === 0) return { status: 400, detail: 'the idp-key header is required' };
    const verifyIdpToken = idpVerifiers.get(idpKeyName);
    if (!verifyIdpToken) return { status: 400, detail: `no IdP configuration entry "${idpKeyName}"` };
    let body: unknown;
    try {
      body = await request.readBody();
    } catch (error) {
      if (error instanceof BodyProblemError) return error.problem;
      throw error;
    }
    const mistake = tokenRequestMistake(body);
    if (mistake !== undefined) return { status: 400, detail: mistake };
    const { tenantId, expiryInSecs } = body as { tenantId: string; expiryInSecs: number };
    let subject: string | undefined;
    try {
      subject = (await verifyIdpToken(idpToken)).sub;
    } catch {
      return { status: 401, detail: 'the IdP token is not valid for this IdP', headers: { 'www-authenticate': 'Bearer realm="iam", error="invalid_token"' } };
    }
    const actor = config.actors.find((a) => a.idp === idpKeyName && a.subject === subject);
    if (!actor) return { status: 403, detail: 'the IdP subject is not an actor of this IAM' };
    if (!Object.hasOwn(actor.tenants, tenantId)) return { status: 403, detail: 'the actor has no access to this tenant' };
    return { token: mintToken({ actor: actor.id, tenantId, expiryInSecs }) };
  }

  async function policyForToken(token: string | undefined): Promise<{ policy: RolePolicy } | DevIamProblem> {
    let app: unknown;
    try {
      if (token === undefined) throw new Error('no token');
      const keySet = createLocalJWKSet({ keys: keys.map((k) => k.jwk) });
      app = (await jwtVerify(token, keySet, { issuer, algorithms: ['RS256'], currentDate: new Date(now()) })).payload.app;
    } catch {
      return { status: 401, detail: 'a valid IAM token is required', headers: { 'www-authenticate': 'Bearer realm="iam"' } };
    }
    const policy = typeof app === 'string' ? policyOf(app) : undefined;
    if (!policy) return { status: 404, detail: 'the token\'s application is not configured' };
    return { policy };
  }

  return {
    issuer,
    devIdpIssuer,
    config: () => config,
    mintToken,
    mintIdpToken,
    policyOf,
    jwks: () => ({ keys: keys.map((k) => k.jwk) }),
    idpJwks: () => ({ keys: [idpKey.jwk] }),
    hasBuiltinIdp: () => config.idps.some((i) => 'builtin' in i),
    exchangeToken,
    policyForToken,
    setConfig(next) {
      const validated = loadDevIamConfig(next);
      idpVerifiers = buildIdpVerifiers(validated.idps);
      config = validated;
    },
    rotateKeys() {
      const fresh = generateSigningKey();
      keys = [fresh, ...keys.slice(0, 1)];
      if (keyFile !== undefined) saveKeys(keyFile, { keys, idpKey });
      return fresh.kid;
    },
  };
}

/** Thrown by a {@link TokenExchangeRequest.readBody} whose body cannot be read: the problem to answer with. */
export class BodyProblemError extends Error {
  constructor(readonly problem: DevIamProblem) {
    super(problem.detail);
    this.name = 'BodyProblemError';
  }
}

/** A config object, or the path of a JSON file holding one; validated either way. */
export function loadDevIamConfig(config: DevIamConfig | string): DevIamConfig {
  if (typeof config !== 'string') return validateConfig(config);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(config, 'utf8'));
  } catch (error) {
    throw new DevIamConfigError('$', `cannot read ${config} as JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  return validateConfig(parsed);
}

/** Why a token request body (spec §2.1) is unacceptable, or `undefined`. */
function tokenRequestMistake(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body must be a JSON object';
  const { tenantId, expiryInSecs, tokenFormat } = body as Record<string, unknown>;
  if (typeof tenantId !== 'string' || tenantId.length === 0) return '"tenantId" must be a non-empty string';
  if (!Number.isSafeInteger(expiryInSecs) || (expiryInSecs as number) <= 0 || (expiryInSecs as number) > MAX_EXPIRY_SEC) {
    return `"expiryInSecs" must be an integer from 1 to ${MAX_EXPIRY_SEC}`;
  }
  if (tokenFormat !== 't1') return '"tokenFormat" must be "t1"';
  return undefined;
}

/** The policy API's view of an application (spec §2.3); `changeId` is a hash of its roles and services. */
function toPolicy(app: ApplicationConfig): RolePolicy {
  const changeId = createHash('sha256').update(JSON.stringify([app.serviceDefinitions, app.roles])).digest('hex').slice(0, 16);
  return {
    applicationId: app.id,
    changeId,
    roles: app.roles.map((role) => ({
      key: role.key,
      servicePolicies: Object.entries(role.permissions).map(([service, permissions]) => ({
        serviceDefinitionSource: 'APPLICATION',
        serviceDefinitionKey: service,
        permissions: permissions.map((key) => ({ key })),
      })),
    })),
  };
}
