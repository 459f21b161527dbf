/**
 * The scenario table's vehicle app on Hono (`iam-authz/hono`) and on a bare Fetch-API handler
 * (`iam-authz/fetch`), both served over real HTTP by @hono/node-server.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import type { Authorizer, IamState } from '../../src/index.js';
import { honoAuthz } from '../../adapters/hono/index.js';
import { createFetchGuards, type OptionalFetchGuard } from '../../adapters/fetch/index.js';
import type { AppOptions, RunningApp } from './apps.js';

const boom = (): string => { throw new Error('resolver failed'); };
const later = (v: string | undefined): Promise<string | undefined> => new Promise((r) => setTimeout(() => { r(v); }, 5));

/** Serves `fetch` on a loopback port (also used by the Hono audit test). */
export async function listen(fetch: (request: Request) => Response | Promise<Response>, handled: { count: number }): Promise<RunningApp> {
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch, port: 0, hostname: '127.0.0.1' }, () => { resolve(s); });
  });
  const close = (): Promise<void> => new Promise((resolve) => {
    if ('closeAllConnections' in server) server.closeAllConnections();
    server.close(() => { resolve(); });
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, handled, close };
}

export async function startHonoApp(authorizer: Authorizer, options: AppOptions = {}): Promise<RunningApp> {
  const handled = { count: 0 };
  const app = new Hono();
  const { authenticate, requirePermission, requireAnyPermission } = honoAuthz(authorizer, { realm: 'vehicle-service', ...options });
  const vin = (c: Context) => c.req.param('vin');
  const reply = (c: Context) => {
    handled.count++;
    const iam = c.get('iam');
    return c.json({ sub: iam?.claims.sub, decision: iam?.decision ?? null, params: c.req.param(), shadow: iam?.shadow ?? false, anonymous: iam === undefined });
  };
  app.get('/vehicle/:vin', requirePermission('vehicle-service', 'READ', 'VIN', vin), reply);
  app.put('/vehicle/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', vin), reply);
  app.get('/async/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (c) => later(c.req.param('vin'))), reply);
  app.get('/throws/:vin', requirePermission('vehicle-service', 'READ', 'VIN', boom), reply);
  app.get('/node/:id', requirePermission('vehicle-service', 'READ', { node: (c) => c.req.param('id') }), reply);
  app.get('/multi', requirePermission('vehicle-service', 'READ', 'VIN', () => ['WVW1', 'WVW2']), reply);
  app.get('/empty', requirePermission('vehicle-service', 'READ', 'VIN', () => undefined), reply);
  app.get('/me', authenticate(), reply);
  app.options('/me', authenticate(), (c) => { handled.count++; return c.body(null, 204); });
  app.get('/optional', authenticate({ optional: true }), reply);
  app.get('/any/:vin', requireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', vin), reply);
  app.get('/anymulti', requireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', () => ['WVW1', 'WVW2']), reply);
  app.get('/shadow/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', vin, { mode: 'report' }), reply);
  app.get('/enforced/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', vin, { mode: 'enforce' }), reply);
  app.onError((err, c) => {
    // Resolver errors (and, with passErrors, IamAuthzErrors) land here.
    const e = err as Error & { status?: number; headers?: Record<string, string> };
    if (e.status === undefined) return c.json({ error: 'internal' }, 500);
    return c.json({ custom: true, message: e.message }, e.status as 401, e.headers);
  });
  return listen(app.fetch, handled);
}

export async function startFetchApp(authorizer: Authorizer, options: AppOptions = {}): Promise<RunningApp> {
  const handled = { count: 0 };
  const { passErrors: _unused, ...guardOptions } = options;
  const { authenticate, requirePermission, requireAnyPermission } = createFetchGuards(authorizer, { realm: 'vehicle-service', ...guardOptions });
  // A Request carries no route parameters: the resolvers read the path themselves.
  const segment = (request: Request) => decodeURIComponent(new URL(request.url).pathname.split('/')[2] ?? '');
  const routes: [method: string, pattern: RegExp, guard: OptionalFetchGuard][] = [
    ['GET', /^\/vehicle\/[^/]+$/, requirePermission('vehicle-service', 'READ', 'VIN', segment)],
    ['PUT', /^\/vehicle\/[^/]+$/, requirePermission('vehicle-service', 'WRITE', 'VIN', segment)],
    ['GET', /^\/async\/[^/]+$/, requirePermission('vehicle-service', 'READ', 'VIN', (r) => later(segment(r)))],
    ['GET', /^\/throws\/[^/]+$/, requirePermission('vehicle-service', 'READ', 'VIN', boom)],
    ['GET', /^\/node\/[^/]+$/, requirePermission('vehicle-service', 'READ', { node: segment })],
    ['GET', /^\/multi$/, requirePermission('vehicle-service', 'READ', 'VIN', () => ['WVW1', 'WVW2'])],
    ['GET', /^\/empty$/, requirePermission('vehicle-service', 'READ', 'VIN', () => undefined)],
    ['GET', /^\/me$/, authenticate()],
    ['OPTIONS', /^\/me$/, authenticate()],
    ['GET', /^\/optional$/, authenticate({ optional: true })],
    ['GET', /^\/any\/[^/]+$/, requireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', segment)],
    ['GET', /^\/anymulti$/, requireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', () => ['WVW1', 'WVW2'])],
    ['GET', /^\/shadow\/[^/]+$/, requirePermission('vehicle-service', 'WRITE', 'VIN', segment, { mode: 'report' })],
    ['GET', /^\/enforced\/[^/]+$/, requirePermission('vehicle-service', 'WRITE', 'VIN', segment, { mode: 'enforce' })],
  ];
  async function handle(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const route = routes.find(([m, p]) => m === method && p.test(pathname));
    if (!route) return new Response('not found', { status: 404 });
    let result: IamState | Response | undefined;
    try {
      result = await route[2](request);
    } catch {
      return Response.json({ error: 'internal' }, { status: 500 });
    }
    if (result instanceof Response) return result;
    handled.count++;
    if (request.method === 'OPTIONS') return new Response(null, { status: 204 });
    const body = JSON.stringify({ sub: result?.claims.sub, decision: result?.decision ?? null, shadow: result?.shadow ?? false, anonymous: result === undefined });
    return new Response(request.method === 'HEAD' ? null : body, { headers: { 'content-type': 'application/json' } });
  }
  return listen(handle, handled);
}
