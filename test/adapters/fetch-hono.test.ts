/**
 * `iam-authz/fetch` called directly with `new Request(...)`, and `iam-authz/hono` over real HTTP
 * (@hono/node-server), both against the development IAM.
 */
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer, IamAuthzError, type Authorizer, type IamState } from '../../src/index.js';
import { startDevIam, type DevIam } from 'iam-authz-dev';
import { createFetchGuards } from '../../adapters/fetch/index.js';
import { toResponse } from '../../src/adapter/index.js';
import { honoAuthz } from '../../adapters/hono/index.js';

const config = fileURLToPath(new URL('../../examples/vehicle-service/iam.json', import.meta.url));
let iam: DevIam;
let authorizer: Authorizer;
let alice: string;
let bob: string;

beforeAll(async () => {
  iam = await startDevIam({ config, console: false });
  authorizer = createAuthorizer({ baseUrl: iam.baseUrl });
  alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
  bob = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' });
});
afterAll(async () => {
  await authorizer.close();
  await iam.close();
});

const vinOf = (request: Request) => new URL(request.url).pathname.split('/')[2];
const req = (path: string, token?: string, method = 'GET') =>
  new Request(`http://vehicles.test${path}`, { method, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });

describe('iam-authz/fetch', () => {
  test('a granted request resolves with the state', async () => {
    const { requirePermission } = createFetchGuards(authorizer);
    const result = await requirePermission('vehicle-service', 'READ', 'VIN', vinOf)(req('/vehicle/WVW1', alice));
    expect(result).not.toBeInstanceOf(Response);
    const state = result as IamState;
    expect(state.claims.sub).toBe('actor-alice');
    expect(state.token).toBe(alice);
    expect(state.decision).toMatchObject({ granted: true, reference: 'VIN=WVW1', grantedBy: { role: 'DRIVER' } });
  });

  test('a refusal resolves with the same answer as the other adapters', async () => {
    const { requirePermission, authenticate } = createFetchGuards(authorizer, { realm: 'vehicles' });
    const denied = await requirePermission('vehicle-service', 'WRITE', 'VIN', vinOf)(req('/vehicle/WVW1', alice, 'PUT'));
    expect(denied).toBeInstanceOf(Response);
    const res = denied as Response;
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="vehicles", error="insufficient_scope", error_description="the caller lacks the permission this request needs"');
    expect(await res.json()).toEqual({ type: 'about:blank', title: 'Forbidden', status: 403, detail: 'the caller lacks the permission this request needs', code: 'ERR_PERMISSION_DENIED' });

    const missing = (await authenticate()(req('/me'))) as Response;
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="vehicles"');
    const forged = (await authenticate()(req('/me', `${alice.slice(0, -4)}AAAA`))) as Response;
    expect(forged.status).toBe(401);
    const text = await forged.text();
    expect(JSON.parse(text)).toMatchObject({ code: 'ERR_TOKEN_INVALID' });
    expect(text).not.toContain(alice.split('.')[2]!.slice(0, 20));
  });

  test('HEAD refusals have no body; the owner of another resource is refused', async () => {
    const { requirePermission } = createFetchGuards(authorizer);
    const head = (await requirePermission('vehicle-service', 'READ', 'VIN', vinOf)(req('/vehicle/WVW1', undefined, 'HEAD'))) as Response;
    expect(head.status).toBe(401);
    expect(head.body).toBeNull();
    const other = (await requirePermission('vehicle-service', 'WRITE', 'VIN', vinOf)(req('/vehicle/WVW9', bob, 'PUT'))) as Response;
    expect(other.status).toBe(403);
  });

  test('a throwing resolver rejects (the runtime answers 500); onError renders refusals', async () => {
    const seen: string[] = [];
    const { requirePermission } = createFetchGuards(authorizer, {
      onError: (error, request) => { seen.push(`${error.code} ${request.method}`); return new Response('no', { status: error.status }); },
    });
    await expect(requirePermission('vehicle-service', 'READ', 'VIN', () => { throw new Error('boom'); })(req('/vehicle/WVW1', alice))).rejects.toThrow('boom');
    const res = (await requirePermission('vehicle-service', 'READ', 'VIN', vinOf)(req('/vehicle/WVW1'))) as Response;
    expect([res.status, await res.text()]).toEqual([401, 'no']);
    expect(seen).toEqual(['ERR_TOKEN_MISSING GET']);
  });

  test('hostile Authorization values end in 401, never a throw', async () => {
    const { authenticate } = createFetchGuards(authorizer);
    for (const value of [`Bearer ${'a'.repeat(1_000_000)}`, 'Bearer a.b.c', `Bearer ${'x.'.repeat(10_000)}`, 'Basic Zm9vOmJhcg==', `bearer ${alice}x`]) {
      const result = await authenticate()(new Request('http://vehicles.test/me', { headers: { authorization: value } }));
      expect(result).toBeInstanceOf(Response);
      expect((result as Response).status).toBe(401);
    }
  });

  test('options are validated at construction', () => {
    expect(() => createFetchGuards(authorizer, { onError: 'x' as never })).toThrow(/"onError"/);
    expect(() => createFetchGuards(authorizer, { realm: '' })).toThrow(/"realm"/);
    expect(() => createFetchGuards({} as Authorizer)).toThrow(TypeError);
    expect(() => createFetchGuards(authorizer).requirePermission('', 'READ', 'VIN', vinOf)).toThrow(/"service"/);
  });

  test('errorResponse and toResponse render an error caught elsewhere', async () => {
    const guards = createFetchGuards(authorizer);
    const error = await authorizer.authenticate(undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IamAuthzError);
    const res = guards.errorResponse(error as IamAuthzError);
    expect(res.status).toBe(401);
    expect(toResponse({ status: 503, headers: { 'retry-after': '5' }, body: { type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'x', code: 'ERR_POLICY_UNAVAILABLE' } }, 'HEAD').body).toBeNull();
  });
});

describe('iam-authz/hono over real HTTP', () => {
  let server: ServerType;
  let url: string;
  const errors: string[] = [];
  beforeAll(async () => {
    const app = new Hono();
    const { authenticate, requirePermission } = honoAuthz(authorizer, { realm: 'vehicle-service' });
    const strict = honoAuthz(authorizer, { passErrors: true });
    const custom = honoAuthz(authorizer, { onError: (error, c) => c.text(`custom ${error.code}`, 418 as never) });
    app.get('/vehicles/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (c) => c.req.param('vin')), (c) => c.json({ sub: c.get('iam')?.claims.sub, reason: c.get('iam')?.decision?.reason }));
    app.put('/vehicles/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', (c) => c.req.param('vin')), (c) => c.body(null, 204));
    app.use('/me/*', authenticate());
    app.get('/me/profile', (c) => c.json({ sub: c.get('iam')?.claims.sub, decision: c.get('iam')?.decision ?? null }));
    app.get('/strict', strict.authenticate(), (c) => c.text('ok'));
    app.get('/custom', custom.authenticate(), (c) => c.text('ok'));
    app.onError((err, c) => {
      errors.push(err instanceof IamAuthzError ? err.code : err.message);
      const e = err as { status?: number; headers?: Record<string, string> };
      return c.json({ mine: true }, (e.status ?? 500) as 500, e.headers);
    });
    server = await new Promise((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => { resolve(s); });
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    if ('closeAllConnections' in server) server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const get = (path: string, token?: string, method = 'GET') => fetch(`${url}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });

  test('granted, denied, authenticate-only with app.use, and c.get("iam")', async () => {
    const ok = await get('/vehicles/WVW1', alice);
    expect(await ok.json()).toEqual({ sub: 'actor-alice', reason: 'GRANTED' });
    const denied = await get('/vehicles/WVW1', alice, 'PUT');
    expect(denied.status).toBe(403);
    expect(denied.headers.get('content-type')).toBe('application/problem+json');
    expect(await denied.json()).toMatchObject({ code: 'ERR_PERMISSION_DENIED', status: 403 });
    expect((await get('/vehicles/WVW1', bob, 'PUT')).status).toBe(204);
    expect(await (await get('/me/profile', bob)).json()).toEqual({ sub: 'actor-bob', decision: null });
    const none = await get('/me/profile');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="vehicle-service"');
  });

  test('passErrors hands the error to app.onError with status and headers; onError renders', async () => {
    const res = await get('/strict');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="iam"');
    expect(await res.json()).toEqual({ mine: true });
    expect(errors).toEqual(['ERR_TOKEN_MISSING']);
    const custom = await get('/custom', 'garbage');
    expect([custom.status, await custom.text()]).toEqual([418, 'custom ERR_TOKEN_INVALID']);
  });

  test('options are validated at construction', () => {
    expect(() => honoAuthz(authorizer, { passErrors: 'yes' as never })).toThrow(/"passErrors"/);
    expect(() => honoAuthz(authorizer, { retryAfterSec: -1 })).toThrow(/"retryAfterSec"/);
  });
});
