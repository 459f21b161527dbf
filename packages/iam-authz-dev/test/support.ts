/**
 * Shared fixtures of the development IAM tests: the spec's example configuration, external IdP keys,
 * a loopback JWKS server for the `jwksUri` IdPs, a raw HTTP client that sends exactly the headers
 * it is given (fetch would add `accept` and `content-type` on its own), and the CLI run as a process.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { startDevIam, type DevIam } from '../src/dev-iam.js';
import type { DevIamConfig } from '../src/config.js';
import { generateSigningKey, signJwt, type SigningKey } from '../src/sign-jwt.js';

/** The corporate IdP (served by the loopback JWKS server). */
export const CORP_KEY = generateSigningKey({ kid: 'corp-1' });
export const CORP_ISSUER = 'https://idp.corp.example';
/** An IdP whose keys are given inline in the config. */
export const INLINE_KEY = generateSigningKey({ kid: 'inline-1' });
export const INLINE_ISSUER = 'https://idp.inline.example';
/** An IdP that requires an audience; its key is also on the loopback JWKS server. */
export const AUD_KEY = generateSigningKey({ kid: 'aud-1' });
export const AUD_ISSUER = 'https://idp.aud.example';
export const AUD_AUDIENCE = 'iam-dev-audience';
/** Not published anywhere; reuses the corp kid, so only the signature tells it apart. */
export const FORGER_KEY = generateSigningKey({ kid: 'corp-1' });

export const VEHICLE_ROLES = [
  { key: 'DRIVER', permissions: { 'vehicle-service': ['READ'] } },
  { key: 'OWNER', permissions: { 'vehicle-service': ['READ', 'WRITE'] } },
];

/** The spec's example (vehicle-service READ/WRITE; DRIVER: READ; OWNER: READ, WRITE) plus IdP variants. */
export function exampleConfig(idpJwksUri: string): DevIamConfig {
  return {
    idps: [
      { key: 'corp', issuer: CORP_ISSUER, jwksUri: idpJwksUri },
      { key: 'inline', issuer: INLINE_ISSUER, jwks: { keys: [INLINE_KEY.jwk] } },
      { key: 'aud', issuer: AUD_ISSUER, jwksUri: idpJwksUri, audience: AUD_AUDIENCE },
      { key: 'dev', builtin: true },
    ],
    applications: [
      {
        id: 'app-1',
        serviceDefinitions: [{ key: 'vehicle-service', permissions: ['READ', 'WRITE'] }],
        roles: structuredClone(VEHICLE_ROLES),
      },
      {
        id: 'app-2',
        serviceDefinitions: [{ key: 'fleet-service', permissions: ['LIST'] }],
        roles: [{ key: 'VIEWER', permissions: { 'fleet-service': ['LIST'] } }],
      },
    ],
    actors: [
      { id: 'actor-alice', idp: 'corp', subject: 'alice', account: 'acc-1', application: 'app-1',
        tenants: { 'tenant-1': [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] } },
      { id: 'actor-bob', idp: 'corp', subject: 'bob', account: 'acc-2', application: 'app-1',
        tenants: {
          'tenant-1': [{ r: ['OWNER'], c: ['VIN=WVW1'] }],
          'tenant-2': [{ r: ['OWNER'], c: ['VIN=WVW2'] }, { r: ['DRIVER'], n: ['node-7'], c: ['VIN=WVW3'] }],
        } },
      { id: 'actor-carol', idp: 'inline', subject: 'carol', account: 'acc-3', application: 'app-1',
        tenants: { 'tenant-1': [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] } },
      { id: 'actor-dave', idp: 'aud', subject: 'dave', account: 'acc-4', application: 'app-1',
        tenants: { 'tenant-1': [{ r: ['OWNER'], c: ['VIN=WVW1'] }] } },
      // The same IdP subject "alice", but from the built-in IdP: a different actor.
      { id: 'actor-dev-alice', idp: 'dev', subject: 'alice', account: 'acc-5', application: 'app-1',
        tenants: { 'tenant-1': [{ r: ['OWNER'], c: ['VIN=WVW1'] }] } },
      { id: 'actor-frank', idp: 'corp', subject: 'frank', account: 'acc-6', application: 'app-2',
        tenants: { 'tenant-9': [{ r: ['VIEWER'], n: ['fleet-1'] }] } },
    ],
  };
}

export interface JwksServer {
  url: string;
  /** Number of JWKS requests served. */
  hits: number;
  close(): Promise<void>;
}

/** A separate loopback server publishing the corp and aud IdP keys at `/jwks.json`. */
export async function startIdpJwksServer(keys: SigningKey[] = [CORP_KEY, AUD_KEY]): Promise<JwksServer> {
  const state: JwksServer = { url: '', hits: 0, close: () => Promise.resolve() };
  const server: Server = createServer((req, res) => {
    state.hits += 1;
    const body = JSON.stringify({ keys: keys.map((k) => k.jwk) });
    res.writeHead(req.url === '/jwks.json' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  };
  return state;
}

export interface Env {
  iam: DevIam;
  idp: JwksServer;
  close(): Promise<void>;
}

export async function startEnv(): Promise<Env> {
  const idp = await startIdpJwksServer();
  const iam = await startDevIam({ config: exampleConfig(`${idp.url}/jwks.json`) });
  return { iam, idp, async close() { await iam.close(); await idp.close(); } };
}

/** An IdP token: `sub`, issuer and a one-hour lifetime by default; `claims` override. */
export function idpToken(key: SigningKey, issuer: string, subject: string, claims: Record<string, unknown> = {}): string {
  const iat = Math.floor(Date.now() / 1000);
  return signJwt({ iss: issuer, sub: subject, iat, exp: iat + 3600, jti: randomUUID(), ...claims }, key);
}

export const corpToken = (subject: string, claims: Record<string, unknown> = {}): string => idpToken(CORP_KEY, CORP_ISSUER, subject, claims);

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Sends exactly `headers` and `body`; nothing is added but `host` (and `content-length` for a body). */
export function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const req = request(url, { method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }); });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

export const TOKEN_REQUEST = { tenantId: 'tenant-1', expiryInSecs: 3600, tokenFormat: 't1' };

/** The headers of a valid token request per spec §4.1, for the corp IdP and `idpToken`. */
export function tokenHeaders(idpTokenValue: string, idpKey = 'corp'): Record<string, string> {
  return {
    authorization: `Bearer ${idpTokenValue}`,
    'idp-key': idpKey,
    accept: 'application/jwt',
    'content-type': 'application/json',
    'cache-control': 'no-store, no-cache, must-revalidate',
    'if-modified-since': '0',
  };
}

/** POSTs to the token endpoint; `headers` replace the valid defaults, a value of `null` removes one. */
export function requestToken(
  iam: DevIam,
  options: { idpToken?: string; idpKey?: string; headers?: Record<string, string | null>; body?: unknown; rawBody?: string; method?: string } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = tokenHeaders(options.idpToken ?? corpToken('alice'), options.idpKey ?? 'corp');
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === null) Reflect.deleteProperty(headers, name);
    else headers[name] = value;
  }
  const body = options.rawBody ?? JSON.stringify(options.body ?? TOKEN_REQUEST);
  return send(`${iam.baseUrl}/authentication/v1/tokens`, { method: options.method ?? 'POST', headers, body });
}

const TITLES: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 413: 'Content Too Large', 415: 'Unsupported Media Type',
};

/** Asserts a problem+json answer with exactly `{type, title, status, detail}`, `detail` matching `detail`. */
export function expectProblem(res: RawResponse, status: number, detail: RegExp): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/problem+json');
  expect(JSON.parse(res.body)).toStrictEqual({ type: 'about:blank', title: TITLES[status], status, detail: expect.stringMatching(detail) });
}

export function decodeSegment(token: string, index: 0 | 1): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[index]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** What a run of the `iam-authz` command printed, and its exit status. */
export interface CliRun { code: number; stdout: string; stderr: string; raw: Buffer }

const packageRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * Runs the `iam-authz` command (from its sources) as a child process. `input`, when given, is
 * written to its stdin, which is then closed (otherwise stdin stays an open pipe); `env` is added
 * to an environment without IAM_AUTHZ_TOKEN. `raw` is stdout and stderr as the bytes written.
 */
export function runCli(args: string[], { input, env = {} }: { input?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  const base = { ...process.env };
  delete base.IAM_AUTHZ_TOKEN;
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: packageRoot, timeout: 30_000, encoding: 'buffer', env: { ...base, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: stdout.toString('utf8'), stderr: stderr.toString('utf8'), raw: Buffer.concat([stdout, stderr]) });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}
