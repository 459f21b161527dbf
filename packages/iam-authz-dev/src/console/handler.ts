/**
 * The development IAM's web console: the page at `/console` and its JSON API under `/console/api`,
 * as one pure handler (`ConsoleRequest` → `ConsoleResponse`) over a small {@link ConsoleHost}
 * interface of the IAM core. No node:http here: the IAM's server forwards `/console` requests.
 * This module checks and routes each request; the route groups answer it.
 */
import { loadAssets, type ConsoleAssets } from './assets.js';
import { createConfigRoutes, putActor, putRole } from './config-routes.js';
import { Explainer } from './explain.js';
import { ChangeIdHistory } from './history.js';
import type { ConsoleHost } from './host.js';
import { json, problem, type ConsoleRequest, type ConsoleResponse } from './http.js';
import { isAllowedHost } from '../host-rule.js';
import { crossOriginRefusal, csrfRefused, SECURITY_HEADERS, Sessions } from './security.js';
import { createTokenRoutes } from './token-routes.js';

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

  const changeIds = () => host.getConfig().applications.map((a) => ({ id: a.id, changeId: host.policyOf(a.id)?.changeId ?? '' }));
  history.observe(changeIds());
  const config = createConfigRoutes(host, sessions, maxBodyBytes, () => { history.observe(changeIds()); });
  const tokens = createTokenRoutes(host, explainer, maxBodyBytes);

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
      if (req.method === 'PUT') return config.mutate(req, (body) => body);
      return only(req, 'GET', () => config.get(req));
    }
    if (first === 'config' && second === 'validate' && third === undefined) return only(req, 'POST', () => config.validate(req));
    if (first === 'applications' && second !== undefined && third === 'roles' && fourth !== undefined) {
      return only(req, 'PUT', () => config.mutate(req, (body, current) => putRole(current, second, fourth, body)));
    }
    if (first === 'actors' && second !== undefined && third === undefined) {
      return only(req, 'PUT', () => config.mutate(req, (body, current) => putActor(current, second, body)));
    }
    if (first === 'tokens' && second === undefined) return only(req, 'POST', () => tokens.mint(req));
    if (first === 'explain' && second === undefined) return only(req, 'POST', () => tokens.explain(req));
    if (first === 'accessible' && second === undefined) return only(req, 'POST', () => tokens.accessible(req));
    return problem(404, 'no such console API route');
  }

  /** Method check, then (for anything but GET) the CSRF check, then the route. */
  async function only(req: ConsoleRequest, method: 'GET' | 'POST' | 'PUT', run: () => ConsoleResponse | Promise<ConsoleResponse>): Promise<ConsoleResponse> {
    const allowed = method === 'GET' ? ['GET', 'HEAD'] : [method];
    if (!allowed.includes(req.method)) return problem(405, `use ${method}`, {}, { allow: allowed.join(', ') });
    if (method !== 'GET' && !sessions.verify(req)) return csrfRefused();
    return run();
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

  return {
    handle,
    close: () => explainer.close(),
  };
}
