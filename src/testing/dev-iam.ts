/**
 * The development IAM: a real HTTP server on 127.0.0.1 that plays the spec's service side — the
 * token endpoint (§4.1), its JWKS, the policy API (§4.2) and, optionally, a built-in IdP — so a
 * consuming service can be developed and tested with no real IAM. Not for production.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { RolePolicy } from '../types.js';
import { DevIamConfigError, validateConfig, type ApplicationConfig, type DevIamConfig, type IdpConfig } from './config.js';
import { createConsole, type DevIamConsole } from './console/handler.js';
import { isConsolePath, serveConsole } from './console/node-http.js';
import { accepts, bearerToken, BodyTooLargeError, mediaType, readBody, sendJson, sendProblem } from './problem.js';
import { loadOrCreateKeys, saveKeys } from './key-file.js';
import { generateSigningKey, signJwt, type SigningKey } from './sign-jwt.js';

/** Longest token lifetime the token endpoint issues, in seconds (24 h). */
export const MAX_EXPIRY_SECS = 86_400;
/** `aud` of the tokens the built-in IdP issues. */
export const DEV_IDP_AUDIENCE = 'iam-authz-dev';
const MAX_BODY_BYTES = 16_384;
const IDP_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

export interface StartDevIamOptions {
  /** The configuration (IdPs, applications, actors), or the path of a JSON file holding it. Validated; errors name the bad field's path. */
  config: DevIamConfig | string;
  /** TCP port. Default `0` (any free port). */
  port?: number;
  /** Interface to listen on. Default `127.0.0.1`; anything but a loopback address prints a warning (`IAM_AUTHZ_DEV_IAM_NOT_LOOPBACK`). */
  host?: string;
  /** Serve the web console at `/console` (edits are saved to the config file, when `config` is one). Default `true`. */
  console?: boolean;
  /**
   * A file for the signing keys (private JWKs, written with mode 0600): read when it exists, else
   * created; rotations are saved to it. Tokens then stay valid across restarts. Keep it out of
   * version control. Default: none (new keys at every start).
   */
  keyFile?: string;
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

export interface DevIam {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** `${baseUrl}/authentication/v1` — the `iss` of issued tokens. */
  readonly issuer: string;
  /** Signs an IAM token directly, for tests; overrides allow expired or malformed tokens on purpose. */
  mintToken(options: MintTokenOptions): string;
  /** Signs an IdP token with the built-in IdP's key (as `POST /dev-idp/token` does). */
  mintIdpToken(subject: string, expiryInSecs?: number): string;
  /** Replaces the configuration (an object or a JSON file's path); applications whose roles changed get a new `changeId`. A bad one throws and the old one stays. */
  setConfig(config: DevIamConfig | string): void;
  /** Starts signing with a new key; the previous one stays in the JWKS until the next rotation. Returns the new kid. */
  rotateKeys(): string;
  /** The current role policy of an application, as the policy API serves it. */
  policyOf(applicationId: string): RolePolicy | undefined;
  /** Stops the server and closes its connections. */
  close(): Promise<void>;
}

export async function startDevIam(options: StartDevIamOptions): Promise<DevIam> {
  let config = loadConfig(options.config);
  const initial = options.keyFile === undefined ? { keys: [generateSigningKey()], idpKey: generateSigningKey() } : loadOrCreateKeys(options.keyFile);
  let keys: SigningKey[] = initial.keys;
  const { idpKey } = initial;
  const server: Server = createServer((req, res) => {
    route(req, res).catch(() => {
      if (!res.headersSent) sendProblem(res, 500, 'internal error');
      else res.destroy();
    });
  });
  // A client trickling a body holds a request for no longer than this (Node's default is 5 min).
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  const listenHost = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(listenHost)) {
    // It mints tokens for any configured actor and its console edits the config: not for a network.
    process.emitWarning(`the development IAM listens on ${listenHost}, which is not a loopback address: anyone who can reach it can mint tokens and, through /console, change its configuration`, { code: 'IAM_AUTHZ_DEV_IAM_NOT_LOOPBACK' });
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, listenHost, () => { resolve(); });
  });
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  const baseUrl = `http://${host}:${port}`;
  const issuer = `${baseUrl}/authentication/v1`;
  const devIdpIssuer = `${baseUrl}/dev-idp`;
  let idpVerifiers = buildIdpVerifiers(config.idps);
  let devConsole: DevIamConsole | undefined;

  function buildIdpVerifiers(idps: IdpConfig[]): Map<string, (token: string) => Promise<JWTPayload>> {
    const map = new Map<string, (token: string) => Promise<JWTPayload>>();
    for (const idp of idps) {
      if ('builtin' in idp) {
        const keySet = createLocalJWKSet({ keys: [idpKey.jwk] });
        // An IdP token must expire: `exp` is required (jose checks it when present, and only then).
        map.set(idp.key, async (token) => (await jwtVerify(token, keySet, { issuer: devIdpIssuer, audience: DEV_IDP_AUDIENCE, algorithms: ['RS256'], requiredClaims: ['exp'] })).payload);
        continue;
      }
      const keySet: JWTVerifyGetKey = idp.jwks ? createLocalJWKSet(idp.jwks) : createRemoteJWKSet(new URL(idp.jwksUri as string));
      const audience = idp.audience;
      map.set(idp.key, async (token) => (await jwtVerify(token, keySet, { issuer: idp.issuer, algorithms: IDP_ALGORITHMS, requiredClaims: ['exp'], ...(audience ? { audience } : {}) })).payload);
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
    const iat = Math.floor(Date.now() / 1000);
    const ars = opts.ars ?? (Object.hasOwn(actor.tenants, opts.tenantId) ? actor.tenants[opts.tenantId] : []);
    const payload = {
      jti: randomUUID(), iss: issuer, sub: actor.id, aud: opts.tenantId, exp: iat + (opts.expiryInSecs ?? 3600), iat,
      acc: actor.account, app: actor.application, tid: opts.tenantId, ars, ...opts.claims,
    };
    const current = keys[0] as SigningKey;
    return signJwt(payload, current, { alg: 'RS256', kid: current.kid, cty: 't1', ...opts.header });
  }

  function mintIdpToken(subject: string, expiryInSecs = 3600): string {
    const iat = Math.floor(Date.now() / 1000);
    return signJwt({ iss: devIdpIssuer, sub: subject, aud: DEV_IDP_AUDIENCE, iat, exp: iat + expiryInSecs, jti: randomUUID() }, idpKey);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', baseUrl).pathname;
    if (devConsole && isConsolePath(path)) return serveConsole(devConsole, req, res);
    if (path === '/authentication/v1/tokens') return issueToken(req, res);
    if (path === '/authentication/v1/.well-known/jwks.json') {
      if (req.method !== 'GET' && req.method !== 'HEAD') { sendProblem(res, 405, 'use GET', { allow: 'GET, HEAD' }); return; }
      sendJson(res, 200, { keys: keys.map((k) => k.jwk) }, { 'cache-control': 'no-cache' });
      return;
    }
    if (path === '/policy/v1/roles') return servePolicy(req, res);
    if (path === '/dev-idp/token' && config.idps.some((i) => 'builtin' in i)) return devIdpToken(req, res);
    if (path === '/dev-idp/.well-known/jwks.json') { sendJson(res, 200, { keys: [idpKey.jwk] }); return; }
    sendProblem(res, 404, 'no such endpoint');
  }

  async function issueToken(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') { sendProblem(res, 405, 'use POST', { allow: 'POST' }); return; }
    if (mediaType(req.headers['content-type']) !== 'application/json') { sendProblem(res, 415, 'content-type must be application/json'); return; }
    // Spec §4.1: the caller must say it takes a JWT; a missing accept or a bare */* does not.
    if (!accepts(req.headers.accept, 'application/jwt', true)) { sendProblem(res, 406, 'accept must name application/jwt'); return; }
    const idpToken = bearerToken(req.headers.authorization);
    if (idpToken === undefined) { sendProblem(res, 401, 'authorization must carry the IdP token as a Bearer token', { 'www-authenticate': 'Bearer realm="iam"' }); return; }
    const idpKeyName = req.headers['idp-key'];
    if (typeof idpKeyName !== 'string' || idpKeyName.length === 0) { sendProblem(res, 400, 'the idp-key header is required'); return; }
    const verifyIdpToken = idpVerifiers.get(idpKeyName);
    if (!verifyIdpToken) { sendProblem(res, 400, `no IdP configuration entry "${idpKeyName}"`); return; }
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req, MAX_BODY_BYTES));
    } catch (error) {
      if (error instanceof BodyTooLargeError) sendProblem(res, 413, `body larger than ${MAX_BODY_BYTES} bytes`);
      else sendProblem(res, 400, 'body is not valid JSON');
      return;
    }
    const problem = tokenRequestProblem(body);
    if (problem !== undefined) { sendProblem(res, 400, problem); return; }
    const { tenantId, expiryInSecs } = body as { tenantId: string; expiryInSecs: number };
    let subject: string | undefined;
    try {
      subject = (await verifyIdpToken(idpToken)).sub;
    } catch {
      sendProblem(res, 401, 'the IdP token is not valid for this IdP', { 'www-authenticate': 'Bearer realm="iam", error="invalid_token"' });
      return;
    }
    const actor = config.actors.find((a) => a.idp === idpKeyName && a.subject === subject);
    if (!actor) { sendProblem(res, 403, 'the IdP subject is not an actor of this IAM'); return; }
    if (!Object.hasOwn(actor.tenants, tenantId)) { sendProblem(res, 403, 'the actor has no access to this tenant'); return; }
    const token = mintToken({ actor: actor.id, tenantId, expiryInSecs });
    res.writeHead(200, { 'content-type': 'application/jwt', 'content-length': Buffer.byteLength(token), 'cache-control': 'no-store' });
    res.end(token);
  }

  async function servePolicy(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') { sendProblem(res, 405, 'use GET', { allow: 'GET, HEAD' }); return; }
    const token = bearerToken(req.headers.authorization);
    let app: unknown;
    try {
      if (token === undefined) throw new Error('no token');
      const keySet = createLocalJWKSet({ keys: keys.map((k) => k.jwk) });
      app = (await jwtVerify(token, keySet, { issuer, algorithms: ['RS256'] })).payload.app;
    } catch {
      sendProblem(res, 401, 'a valid IAM token is required', { 'www-authenticate': 'Bearer realm="iam"' });
      return;
    }
    const policy = typeof app === 'string' ? policyOf(app) : undefined;
    if (!policy) { sendProblem(res, 404, 'the token\'s application is not configured'); return; }
    const etag = `"${policy.changeId}"`;
    const inm = req.headers['if-none-match'];
    // If-None-Match compares weakly (RFC 9110 §13.1.2): W/"x" matches "x".
    if (inm !== undefined && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*')) {
      res.writeHead(304, { etag, 'cache-control': 'no-cache' });
      res.end();
      return;
    }
    sendJson(res, 200, policy, { etag, 'cache-control': 'no-cache' });
  }

  async function devIdpToken(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') { sendProblem(res, 405, 'use POST', { allow: 'POST' }); return; }
    let subject: unknown;
    try {
      subject = (JSON.parse(await readBody(req, MAX_BODY_BYTES)) as { subject?: unknown } | null)?.subject;
    } catch {
      sendProblem(res, 400, 'body must be JSON: {"subject": "..."}');
      return;
    }
    if (typeof subject !== 'string' || subject.length === 0) { sendProblem(res, 400, '"subject" must be a non-empty string'); return; }
    const token = mintIdpToken(subject);
    res.writeHead(200, { 'content-type': 'application/jwt', 'content-length': Buffer.byteLength(token), 'cache-control': 'no-store' });
    res.end(token);
  }

  const devIam: DevIam = {
    baseUrl,
    issuer,
    mintToken,
    mintIdpToken,
    policyOf,
    setConfig(next) {
      const validated = loadConfig(next);
      idpVerifiers = buildIdpVerifiers(validated.idps);
      config = validated;
    },
    rotateKeys() {
      const fresh = generateSigningKey();
      keys = [fresh, ...keys.slice(0, 1)];
      if (options.keyFile !== undefined) saveKeys(options.keyFile, { keys, idpKey });
      return fresh.kid;
    },
    async close() {
      await devConsole?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => { resolve(); }));
    },
  };
  if (options.console !== false) {
    devConsole = createConsole({
      baseUrl, configFile: typeof options.config === 'string' ? options.config : undefined, maxExpiryInSecs: MAX_EXPIRY_SECS,
      getConfig: () => config, setConfig: (next) => { devIam.setConfig(next); }, mintToken, policyOf,
    });
  }
  return devIam;
}

/** A config object, or the path of a JSON file holding one; validated either way. */
function loadConfig(config: DevIamConfig | string): DevIamConfig {
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
function tokenRequestProblem(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body must be a JSON object';
  const { tenantId, expiryInSecs, tokenFormat } = body as Record<string, unknown>;
  if (typeof tenantId !== 'string' || tenantId.length === 0) return '"tenantId" must be a non-empty string';
  if (!Number.isSafeInteger(expiryInSecs) || (expiryInSecs as number) <= 0 || (expiryInSecs as number) > MAX_EXPIRY_SECS) {
    return `"expiryInSecs" must be an integer from 1 to ${MAX_EXPIRY_SECS}`;
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

/** `localhost`, `127.0.0.0/8` or `::1`: reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h) || /^::ffff:127(?:\.\d{1,3}){3}$/.test(h);
}
