/**
 * The development IAM: a real HTTP server on 127.0.0.1 that plays the spec's service side — the
 * token endpoint (§4.1), its JWKS, the policy API (§4.2) and, optionally, a built-in IdP — so a
 * consuming service can be developed and tested with no real IAM. Not for production.
 *
 * This file is the `node:http` layer only: methods, media types, bodies, ETags. What the endpoints
 * mean lives in the network-free core (`dev-iam-core.ts`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DevIamConfig } from './config.js';
import { createConsole, type DevIamConsole } from './console/handler.js';
import { isConsolePath, serveConsole } from './console/node-http.js';
import { isAllowedHost, isLoopbackHost } from './host-rule.js';
import { BodyProblemError, createDevIamCore, loadDevIamConfig, MAX_EXPIRY_SEC, type DevIamCore, type DevIamProblem, type MintTokenOptions } from './dev-iam-core.js';
import { loadOrCreateKeys } from './key-file.js';
import type { RolePolicy } from './policy.js';
import { accepts, bearerToken, BodyTooLargeError, mediaType, readBody, sendJson, sendProblem } from './problem.js';

export { MAX_EXPIRY_SEC, DEV_IDP_AUDIENCE, type MintTokenOptions } from './dev-iam-core.js';
export { isLoopbackHost } from './host-rule.js';

const MAX_BODY_BYTES = 16_384;

export interface StartDevIamOptions {
  /** The configuration (IdPs, applications, actors), or the path of a JSON file holding it. Validated; errors name the bad field's path. */
  config: DevIamConfig | string;
  /** TCP port. Default `0` (any free port). */
  port?: number | undefined;
  /**
   * Interface to listen on. Default `127.0.0.1`; anything but a loopback address prints a warning
   * (`IAM_AUTHZ_DEV_IAM_NOT_LOOPBACK`). Every endpoint answers only to the `Host` names of this
   * address (`localhost`, `127.0.0.1`, `[::1]` and the address itself, with the port; bound beyond
   * loopback, also IP literals with the port), against DNS rebinding.
   */
  host?: string | undefined;
  /**
   * Serve the web console at `/console` (edits are saved to the config file, when `config` is one).
   * Default: `true` when listening on a loopback address, else `false` — the console can change the
   * configuration, including JWKS URLs the IAM then fetches, so a network must not reach it unasked.
   */
  console?: boolean | undefined;
  /**
   * A file for the signing keys (private JWKs, written with mode 0600): read when it exists, else
   * created; rotations are saved to it. Tokens then stay valid across restarts. Keep it out of
   * version control. Like ssh with its keys, a file that is a symlink, owned by another user, or
   * open to group or others in any way (writable, or readable: 0644, 0640) is refused
   * ({@link DevKeyFileError}, naming the mode) and left unchanged, never silently tightened: its
   * keys may already have been read. 0600 and 0400 are fine. Default: none (new keys at every
   * start).
   */
  keyFile?: string | undefined;
  /**
   * The IAM's clock, in milliseconds since the epoch: `iat`/`exp` of the tokens it issues and the
   * expiry checks of the IdP and IAM tokens presented to it. Give the same function as the
   * authorizer's `now` to test expiry without waiting. Default `Date.now`.
   */
  now?: (() => number) | undefined;
}

export interface DevIam {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** `${baseUrl}/authentication/v1` — the `iss` of issued tokens. */
  readonly issuer: string;
  /** `${baseUrl}/console`, or `undefined` when the console is off (see {@link StartDevIamOptions.console}). */
  readonly consoleUrl: string | undefined;
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
  checkOptions(options);
  // Config and key-file errors are thrown before a port is taken.
  const config = loadDevIamConfig(options.config);
  const keys = options.keyFile === undefined ? undefined : loadOrCreateKeys(options.keyFile);
  const listenHost = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(listenHost)) {
    // It mints tokens for any configured actor and its console edits the config: not for a network.
    process.emitWarning(`the development IAM listens on ${listenHost}, which is not a loopback address: anyone who can reach it can mint tokens and, through /console, change its configuration`, { code: 'IAM_AUTHZ_DEV_IAM_NOT_LOOPBACK' });
  }
  const server: Server = createServer();
  // A client trickling a body holds a request for no longer than this (Node's default is 5 min).
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, listenHost, () => { resolve(); });
  });
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  const baseUrl = `http://${host}:${port}`;
  const core = createDevIamCore({ config, keys, keyFile: options.keyFile, issuer: `${baseUrl}/authentication/v1`, devIdpIssuer: `${baseUrl}/dev-idp`, ...(options.now ? { now: options.now } : {}) });
  // Decided on the address actually bound: a name that resolved to loopback is loopback.
  const consoleOn = options.console ?? isLoopbackHost(address);
  const devConsole: DevIamConsole | undefined = !consoleOn ? undefined : createConsole({
    baseUrl, configFile: typeof options.config === 'string' ? options.config : undefined, maxExpirySec: MAX_EXPIRY_SEC,
    getConfig: () => core.config(), setConfig: (next) => { core.setConfig(next); }, mintToken: core.mintToken, policyOf: core.policyOf,
    ...(options.now ? { now: options.now } : {}),
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    route(core, devConsole, baseUrl, req, res).catch(() => {
      if (!res.headersSent) sendProblem(res, 500, 'internal error');
      else res.destroy();
    });
  });
  return {
    baseUrl,
    issuer: core.issuer,
    consoleUrl: devConsole === undefined ? undefined : `${baseUrl}/console`,
    mintToken: core.mintToken,
    mintIdpToken: core.mintIdpToken,
    policyOf: core.policyOf,
    setConfig: core.setConfig,
    rotateKeys: core.rotateKeys,
    async close() {
      // The server closes even if the console cannot: a process must be able to exit after close().
      try {
        await devConsole?.close();
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => { resolve(); }));
      }
    },
  };
}

async function route(core: DevIamCore, devConsole: DevIamConsole | undefined, baseUrl: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!isAllowedHost(req.headers.host, baseUrl)) {
    sendProblem(res, 403, 'Host not allowed: the development IAM answers only to the names of the address it listens on');
    return;
  }
  const path = new URL(req.url ?? '/', baseUrl).pathname;
  if (devConsole && isConsolePath(path)) return serveConsole(devConsole, req, res);
  if (path === '/authentication/v1/tokens') return issueToken(core, req, res);
  if (path === '/authentication/v1/.well-known/jwks.json') {
    if (req.method !== 'GET' && req.method !== 'HEAD') { sendProblem(res, 405, 'use GET', { allow: 'GET, HEAD' }); return; }
    sendJson(res, 200, core.jwks(), { 'cache-control': 'no-cache' });
    return;
  }
  if (path === '/policy/v1/roles') return servePolicy(core, req, res);
  if (path === '/dev-idp/token' && core.hasBuiltinIdp()) return devIdpToken(core, req, res);
  if (path === '/dev-idp/.well-known/jwks.json') { sendJson(res, 200, core.idpJwks()); return; }
  sendProblem(res, 404, 'no such endpoint');
}

async function issueToken(core: DevIamCore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') { sendProblem(res, 405, 'use POST', { allow: 'POST' }); return; }
  if (mediaType(req.headers['content-type']) !== 'application/json') { sendProblem(res, 415, 'content-type must be application/json'); return; }
  // Spec §4.1: the caller must say it takes a JWT; a missing accept or a bare */* does not.
  if (!accepts(req.headers.accept, 'application/jwt', true)) { sendProblem(res, 406, 'accept must name application/jwt'); return; }
  const idpKey = req.headers['idp-key'];
  const outcome = await core.exchangeToken({
    idpToken: bearerToken(req.headers.authorization),
    idpKey: typeof idpKey === 'string' ? idpKey : undefined,
    readBody: () => readJsonBody(req),
  });
  if ('status' in outcome) { sendProblemOf(res, outcome); return; }
  sendJwt(res, outcome.token);
}

/** The request body as JSON; rejects with a 413 or 400 {@link BodyProblemError}. */
async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  try {
    return JSON.parse(await readBody(req, MAX_BODY_BYTES));
  } catch (error) {
    throw new BodyProblemError(error instanceof BodyTooLargeError
      ? { status: 413, detail: `body larger than ${MAX_BODY_BYTES} bytes` }
      : { status: 400, detail: 'body is not valid JSON' });
  }
}

async function servePolicy(core: DevIamCore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') { sendProblem(res, 405, 'use GET', { allow: 'GET, HEAD' }); return; }
  const outcome = await core.policyForToken(bearerToken(req.headers.authorization));
  if ('status' in outcome) { sendProblemOf(res, outcome); return; }
  const etag = `"${outcome.policy.changeId}"`;
  const inm = req.headers['if-none-match'];
  // If-None-Match compares weakly (RFC 9110 §13.1.2): W/"x" matches "x".
  if (inm !== undefined && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*')) {
    res.writeHead(304, { etag, 'cache-control': 'no-cache' });
    res.end();
    return;
  }
  sendJson(res, 200, outcome.policy, { etag, 'cache-control': 'no-cache' });
}

async function devIdpToken(core: DevIamCore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') { sendProblem(res, 405, 'use POST', { allow: 'POST' }); return; }
  let subject: unknown;
  try {
    subject = (JSON.parse(await readBody(req, MAX_BODY_BYTES)) as { subject?: unknown } | null)?.subject;
  } catch {
    sendProblem(res, 400, 'body must be JSON: {"subject": "..."}');
    return;
  }
  if (typeof subject !== 'string' || subject.length === 0) { sendProblem(res, 400, '"subject" must be a non-empty string'); return; }
  sendJwt(res, core.mintIdpToken(subject));
}

function sendProblemOf(res: ServerResponse, problem: DevIamProblem): void {
  sendProblem(res, problem.status, problem.detail, problem.headers);
}

function sendJwt(res: ServerResponse, token: string): void {
  res.writeHead(200, { 'content-type': 'application/jwt', 'content-length': Buffer.byteLength(token), 'cache-control': 'no-store' });
  res.end(token);
}

/** Misuse is a TypeError naming the option; `null` is never "default" (only `undefined` is). */
function checkOptions(options: StartDevIamOptions): void {
  // Typed callers cannot pass null or a string port; JavaScript callers and JSON-fed options can.
  const given = options as unknown;
  if (typeof given !== 'object' || given === null) throw new TypeError('startDevIam: options must be an object');
  const bad = (name: string, expected: string): never => {
    const value = (given as Record<string, unknown>)[name];
    throw new TypeError(`startDevIam: "${name}" must be ${expected}${value === null ? ' (got null; leave it undefined for the default)' : ''}`);
  };
  const { config, port, host, console: withConsole, keyFile, now } = given as Record<keyof StartDevIamOptions, unknown>;
  if (typeof config === 'string' ? config.length === 0 : typeof config !== 'object' || config === null || Array.isArray(config)) bad('config', 'a configuration object or the path of a JSON file');
  if (port !== undefined && (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65_535)) bad('port', 'an integer from 0 to 65535');
  if (host !== undefined && (typeof host !== 'string' || host.length === 0)) bad('host', 'a non-empty string');
  if (withConsole !== undefined && typeof withConsole !== 'boolean') bad('console', 'a boolean');
  if (keyFile !== undefined && (typeof keyFile !== 'string' || keyFile.length === 0)) bad('keyFile', 'a non-empty file path');
  if (now !== undefined && typeof now !== 'function') bad('now', 'a function returning milliseconds');
}
