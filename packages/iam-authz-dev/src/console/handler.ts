/**
 * The development IAM's web console: the page at `/console` and its JSON API under `/console/api`,
 * as one pure handler (`ConsoleRequest` → `ConsoleResponse`) over a small {@link ConsoleHost}
 * interface of the IAM core. No node:http here: the IAM's server forwards `/console` requests.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { RolePolicy } from '../policy.js';
import { DevIamConfigError, validateConfig, type DevIamConfig } from '../config.js';
import { loadAssets, type ConsoleAssets } from './assets.js';
import { Explainer } from './explain.js';
import { ChangeIdHistory } from './history.js';
import { BodyTooLarge, json, jsonDepthExceeds, problem, readText, type ConsoleRequest, type ConsoleResponse } from './http.js';
import { writeFileAtomic } from './save-file.js';
import { isAllowedHost } from '../host-rule.js';
import { crossOriginRefusal, SECURITY_HEADERS, Sessions } from './security.js';

/** What the console needs from the development IAM it is mounted on. */
export interface ConsoleHost {
  /** Where the IAM is reached, e.g. `http://127.0.0.1:4000`: the allowed `Host`, and where the decision explorer's Authorizer calls back. */
  readonly baseUrl: string;
  /** The JSON file the IAM was started with; edits are saved there. `undefined`: edits live in memory only. */
  readonly configFile: string | undefined;
  /** Longest token lifetime the IAM issues, in seconds. */
  readonly maxExpirySec: number;
  /** The configuration in force. */
  getConfig(): DevIamConfig;
  /** Puts a validated configuration in force (applications whose roles changed get a new `changeId`). */
  setConfig(next: DevIamConfig): void;
  /** Signs an IAM token for an actor in one of its tenants. */
  mintToken(options: { actor: string; tenantId: string; expiryInSecs: number }): string;
  /** An application's role policy as the policy API serves it (for its `changeId`). */
  policyOf(applicationId: string): RolePolicy | undefined;
  /** The IAM's clock (ms), for the decision explorer. Default `Date.now`. */
  readonly now?: () => number;
}

/** Options of {@link createConsole}. */
export interface ConsoleOptions {
  /** Largest request body accepted, in bytes; larger ones get 413. Default `262_144` (256 KiB). */
  maxBodyBytes?: number;
}

/** A console handler: {@link createConsole} returns one. */
export interface DevIamConsole {
  /** Answers one request whose path is `/console` or under `/console/`. Never rejects. */
  handle(req: ConsoleRequest): Promise<ConsoleResponse>;
  /** Releases the decision explorer's sockets. */
  close(): Promise<void>;
}

/** Deepest JSON nesting accepted in a request body (a config needs 6). */
const MAX_JSON_DEPTH = 32;

/**
 * The console over `host`: answers `/console` (the page) and `/console/api/*` (its JSON API).
 * Throws a `TypeError` naming `maxBodyBytes` when that option is not a positive integer.
 */
export function createConsole(host: ConsoleHost, options: ConsoleOptions = {}): DevIamConsole {
  const maxBodyBytes = options.maxBodyBytes ?? 262_144;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) throw new TypeError('createConsole: "maxBodyBytes" must be a positive integer');
  const sessions = new Sessions();
  const history = new ChangeIdHistory();
  const explainer = new Explainer(host.baseUrl, host.now);
  let assets: Promise<ConsoleAssets> | undefined;
  // Saves are serialised: the If-Match check and the write must see the same current version.
  let saving: Promise<unknown> = Promise.resolve();

  const changeIds = () => host.getConfig().applications.map((a) => ({ id: a.id, changeId: host.policyOf(a.id)?.changeId ?? '' }));
  history.observe(changeIds());

  async function handle(req: ConsoleRequest): Promise<ConsoleResponse> {
    let res: ConsoleResponse;
    try {
      res = await route(req);
    } catch {
      res = problem(500, 'internal error');
    }
    return { ...res, headers: { ...SECURITY_HEADERS, ...res.headers } };
  }

  async function route(req: ConsoleRequest): Promise<ConsoleResponse> {
    const hostHeader = req.headers.host ?? '';
    // The IAM checks Host before routing here too; the console keeps the check for any other server that mounts it.
    if (!isAllowedHost(req.headers.host, host.baseUrl)) return problem(403, 'Host not allowed: the console answers only to the names of the address the IAM listens on');
    const crossOrigin = crossOriginRefusal(req, hostHeader.toLowerCase());
    if (crossOrigin !== undefined) return problem(403, crossOrigin);
    const path = new URL(req.url, 'http://console.invalid').pathname;

    const asset = path === '/console' || path === '/console/' ? 'html' : path === '/console/page.css' ? 'css' : path === '/console/page.js' ? 'js' : undefined;
    if (asset !== undefined) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return problem(405, 'use GET', {}, { allow: 'GET, HEAD' });
      assets ??= loadAssets();
      const files = await assets.catch((error: unknown) => {
        assets = undefined;
        throw error;
      });
      const type = asset === 'html' ? 'text/html; charset=utf-8' : asset === 'css' ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
      return { status: 200, headers: { 'content-type': type, 'cache-control': 'no-cache' }, body: files[asset] };
    }
    if (!path.startsWith('/console/api/')) return problem(404, 'no such console page');
    const segments = path.slice('/console/api/'.length).split('/');
    let parts: string[];
    try {
      parts = segments.map((s) => decodeURIComponent(s));
    } catch {
      return problem(400, 'malformed path');
    }
    const [first, second, third, fourth, ...rest] = parts;
    if (rest.length > 0) return problem(404, 'no such console API route');

    if (first === 'session' && second === undefined) return only(req, 'GET', () => session(req));
    if (first === 'status' && second === undefined) return only(req, 'GET', status);
    if (first === 'config' && second === undefined) {
      if (req.method === 'PUT') return mutate(req, (body) => body);
      return only(req, 'GET', () => getConfig(req));
    }
    if (first === 'config' && second === 'validate' && third === undefined) return only(req, 'POST', () => validateOnly(req));
    if (first === 'applications' && second !== undefined && third === 'roles' && fourth !== undefined) {
      return only(req, 'PUT', () => mutate(req, (body, current) => putRole(current, second, fourth, body)));
    }
    if (first === 'actors' && second !== undefined && third === undefined) {
      return only(req, 'PUT', () => mutate(req, (body, current) => putActor(current, second, body)));
    }
    if (first === 'tokens' && second === undefined) return only(req, 'POST', () => mint(req));
    if (first === 'explain' && second === undefined) return only(req, 'POST', () => explain(req));
    if (first === 'accessible' && second === undefined) return only(req, 'POST', () => accessible(req));
    return problem(404, 'no such console API route');
  }

  /** Method check, then (for anything but GET) the CSRF check, then the route. */
  async function only(req: ConsoleRequest, method: 'GET' | 'POST' | 'PUT', run: () => ConsoleResponse | Promise<ConsoleResponse>): Promise<ConsoleResponse> {
    const allowed = method === 'GET' ? ['GET', 'HEAD'] : [method];
    if (!allowed.includes(req.method)) return problem(405, `use ${method}`, {}, { allow: allowed.join(', ') });
    if (method !== 'GET' && !sessions.verify(req)) return csrfRefused();
    return run();
  }

  function csrfRefused(): ConsoleResponse {
    return problem(403, 'a valid X-CSRF-Token is required: GET /console/api/session (keeping its cookie) gives one');
  }

  function session(req: ConsoleRequest): ConsoleResponse {
    const { csrfToken, setCookie } = sessions.open(req);
    return json(200, { csrfToken }, setCookie === undefined ? {} : { 'set-cookie': setCookie });
  }

  function status(): ConsoleResponse {
    history.observe(changeIds());
    const file = host.configFile;
    return json(200, {
      storage: file === undefined ? { kind: 'memory' } : { kind: 'file', file },
      baseUrl: host.baseUrl,
      maxExpirySec: host.maxExpirySec,
      applications: changeIds().map(({ id, changeId }) => ({ id, changeId, history: history.of(id) })),
    });
  }

  function getConfig(req: ConsoleRequest): ConsoleResponse {
    const config = host.getConfig();
    const etag = etagOf(config);
    if (matches(req.headers['if-none-match'], etag)) return { status: 304, headers: { etag, 'cache-control': 'no-store' }, body: '' };
    return json(200, config, { etag });
  }

  /** Parses a JSON body within the size and depth caps; a response when it cannot. */
  async function jsonBody(req: ConsoleRequest): Promise<{ value: unknown } | ConsoleResponse> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') return problem(415, 'content-type must be application/json');
    let text: string;
    try {
      text = await readText(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLarge) return problem(413, `body larger than ${maxBodyBytes} bytes`, {}, { connection: 'close' });
      throw error;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return problem(400, 'body is not valid JSON', { field: '$' });
    }
    if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) return problem(400, `body nests deeper than ${MAX_JSON_DEPTH} levels`, { field: '$' });
    return { value };
  }

  async function validateOnly(req: ConsoleRequest): Promise<ConsoleResponse> {
    const body = await jsonBody(req);
    if (!('value' in body)) return body;
    try {
      validateConfig(body.value);
    } catch (error) {
      if (error instanceof DevIamConfigError) return invalid(error);
      throw error;
    }
    return json(200, { valid: true });
  }

  /**
   * The one way a change is made: If-Match against the current version, the same validation as the
   * config file, an atomic save to the file (when there is one), then the change put in force.
   */
  async function mutate(req: ConsoleRequest, change: (body: unknown, current: DevIamConfig) => unknown): Promise<ConsoleResponse> {
    if (!sessions.verify(req)) return csrfRefused();
    const ifMatch = req.headers['if-match'];
    if (ifMatch === undefined) return problem(428, 'If-Match is required: send the ETag of GET /console/api/config');
    const body = await jsonBody(req);
    if (!('value' in body)) return body;
    const run = saving.then(() => commit(ifMatch, body.value, change));
    saving = run.catch(() => undefined);
    return run;
  }

  async function commit(ifMatch: string, body: unknown, change: (body: unknown, current: DevIamConfig) => unknown): Promise<ConsoleResponse> {
    const current = host.getConfig();
    const currentEtag = etagOf(current);
    if (!matches(ifMatch, currentEtag)) {
      return problem(409, 'the configuration was changed since you loaded it (another tab, a script or the file); reload it and apply your change again', { currentEtag }, { etag: currentEtag });
    }
    let next: DevIamConfig;
    try {
      const proposed = change(body, structuredClone(current));
      if (isResponse(proposed)) return proposed;
      next = validateConfig(proposed);
    } catch (error) {
      if (error instanceof DevIamConfigError) return invalid(error);
      throw error;
    }
    if (host.configFile !== undefined) {
      // A hand edit of the file that was not reloaded (npm start does not watch it) is not overwritten either.
      const onDisk = await readConfigFile(host.configFile);
      if (onDisk.config === undefined || etagOf(onDisk.config) !== currentEtag) {
        return problem(409, 'the config file on disk differs from the configuration in force (edited by hand and not reloaded?); reload or restore the file, then apply your change again', { currentEtag }, { etag: currentEtag });
      }
      try {
        await writeFileAtomic(host.configFile, fileText(onDisk.members, next));
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        return problem(500, `the config file could not be saved${typeof code === 'string' ? ` (${code})` : ''}; nothing was changed`);
      }
    }
    host.setConfig(next);
    history.observe(changeIds());
    return json(200, host.getConfig(), { etag: etagOf(host.getConfig()) });
  }

  async function mint(req: ConsoleRequest): Promise<ConsoleResponse> {
    const body = await jsonBody(req);
    if (!('value' in body)) return body;
    const input = record(body.value);
    if (!input) return problem(400, 'body must be a JSON object', { field: '$' });
    const { actor: actorId, tenantId, expiryInSecs } = input;
    const actor = host.getConfig().actors.find((a) => a.id === actorId);
    if (typeof actorId !== 'string' || !actor) return problem(400, '"actor" must be the id of a configured actor', { field: 'actor' });
    if (typeof tenantId !== 'string' || !Object.hasOwn(actor.tenants, tenantId)) return problem(400, `"tenantId" must be one of the actor's tenants`, { field: 'tenantId' });
    if (!Number.isSafeInteger(expiryInSecs) || (expiryInSecs as number) < 1 || (expiryInSecs as number) > host.maxExpirySec) {
      return problem(400, `"expiryInSecs" must be an integer from 1 to ${host.maxExpirySec}`, { field: 'expiryInSecs' });
    }
    const token = host.mintToken({ actor: actorId, tenantId, expiryInSecs: expiryInSecs as number });
    const [header = '', payload = ''] = token.split('.');
    return json(200, { token, header: decodePart(header), claims: decodePart(payload) });
  }

  /** The body of a decision query: a JSON object whose token, service and permission are non-empty strings. */
  async function queryBody(req: ConsoleRequest): Promise<{ input: Record<string, unknown> } | ConsoleResponse> {
    const body = await jsonBody(req);
    if (!('value' in body)) return body;
    const input = record(body.value);
    if (!input) return problem(400, 'body must be a JSON object', { field: '$' });
    return stringFields(input, ['token', 'service', 'permission']) ?? { input };
  }

  async function explain(req: ConsoleRequest): Promise<ConsoleResponse> {
    const query = await queryBody(req);
    if (!('input' in query)) return query;
    const { input } = query;
    const resource = record(input.resource);
    const type = resource?.type;
    const value = resource?.value;
    const node = resource?.node;
    if (typeof node === 'string' && node.length > 0) {
      return json(200, await explainer.explain({ token: input.token as string, service: input.service as string, permission: input.permission as string, resource: { node } }));
    }
    if (typeof type !== 'string' || type.length === 0 || type.includes('=')) return problem(400, '"resource.type" must be a non-empty reference type without "=" (or give "resource.node")', { field: 'resource.type' });
    if (typeof value !== 'string' || value.length === 0) return problem(400, '"resource.value" must be a non-empty string', { field: 'resource.value' });
    return json(200, await explainer.explain({ token: input.token as string, service: input.service as string, permission: input.permission as string, resource: { type, value } }));
  }

  async function accessible(req: ConsoleRequest): Promise<ConsoleResponse> {
    const query = await queryBody(req);
    if (!('input' in query)) return query;
    const { input } = query;
    const { type } = input;
    if (type !== undefined && (typeof type !== 'string' || type.length === 0 || type.includes('='))) {
      return problem(400, '"type" must be a non-empty reference type without "=" (omit it for node ids)', { field: 'type' });
    }
    return json(200, await explainer.accessible({
      token: input.token as string, service: input.service as string, permission: input.permission as string, ...(type === undefined ? {} : { type }),
    }));
  }

  return {
    handle,
    close: () => explainer.close(),
  };
}

/** A strong ETag over the configuration's canonical JSON. */
export function etagOf(config: DevIamConfig): string {
  return `"${createHash('sha256').update(JSON.stringify(config)).digest('base64url').slice(0, 22)}"`;
}

/** RFC 9110 list match for If-Match / If-None-Match: `*` or one of the listed tags, compared exactly (the console's tags are strong). */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag;
  });
}

function invalid(error: DevIamConfigError): ConsoleResponse {
  return problem(400, error.message, { field: error.path });
}

function isResponse(value: unknown): value is ConsoleResponse {
  return value instanceof ConsoleProblem;
}

/** A refusal from a change function (e.g. an unknown application), distinguished from a config. */
class ConsoleProblem implements ConsoleResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  constructor(response: ConsoleResponse) {
    this.status = response.status;
    this.headers = response.headers;
    this.body = response.body as string;
  }
}

function putRole(config: DevIamConfig, applicationId: string, roleKey: string, body: unknown): unknown {
  const app = config.applications.find((a) => a.id === applicationId);
  if (!app) return new ConsoleProblem(problem(404, `no application "${applicationId}"`));
  const role = { key: roleKey, permissions: record(body)?.permissions };
  const index = app.roles.findIndex((r) => r.key === roleKey);
  if (index === -1) app.roles.push(role as never);
  else app.roles[index] = role as never;
  return config;
}

function putActor(config: DevIamConfig, actorId: string, body: unknown): unknown {
  const actor = record(body);
  if (!actor) return new ConsoleProblem(problem(400, 'body must be a JSON object', { field: '$' }));
  if (actor.id !== undefined && actor.id !== actorId) return new ConsoleProblem(problem(400, '"id" must match the path', { field: 'id' }));
  const next = { ...actor, id: actorId };
  const index = config.actors.findIndex((a) => a.id === actorId);
  if (index === -1) config.actors.push(next as never);
  else config.actors[index] = next as never;
  return config;
}

/** The config file as it is now: its validated configuration (`undefined` when unreadable or invalid) and its top-level members. */
async function readConfigFile(file: string): Promise<{ config: DevIamConfig | undefined; members: Record<string, unknown> }> {
  try {
    const members = record(JSON.parse(await readFile(file, 'utf8'))) ?? {};
    try {
      return { config: validateConfig(members), members };
    } catch {
      return { config: undefined, members };
    }
  } catch {
    return { config: undefined, members: {} };
  }
}

/** The file's new text: its other top-level members (e.g. `$schema`, notes) are kept. */
function fileText(members: Record<string, unknown>, next: DevIamConfig): string {
  return `${JSON.stringify({ ...members, ...next }, null, 2)}\n`;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function stringFields(input: Record<string, unknown>, names: string[]): ConsoleResponse | undefined {
  for (const name of names) {
    const v = input[name];
    if (typeof v !== 'string' || v.length === 0) return problem(400, `"${name}" must be a non-empty string`, { field: name });
  }
  return undefined;
}

function decodePart(part: string): unknown {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}
