/**
 * The route audit's framework-neutral half: what each guard of the kit is marked as enforcing, how
 * a route's guards add up to its access, the two findings (a route with no guard, an object route
 * whose permission guards never read the object), `throwOn`, and the OpenAPI path form. Each
 * framework's `auditRoutes` is tested on a real application in test/adapters/audit.test.ts.
 */
import { describe, expect, test } from 'vitest';
import { createGuards, wrapGuards } from '../../../src/adapter/index.js';
import { audit, auditOptions, guardMarkOf, openApiPath, pathParameters, requirementMark, type RouteEntry } from '../../../src/adapter/internal.js';
import { parsePermissionArgs } from '../../../src/adapter/permission-args.js';
import { createAuthorizer } from '../../../src/index.js';
import { thrownBy } from '../../helpers/errors.js';

const authorizer = createAuthorizer({ baseUrl: 'https://iam.example.test', localJwks: { keys: [{ kty: 'RSA', kid: 'k', n: 'AQAB', e: 'AQAB' }] } });
const guards = createGuards<{ params: { vin: string } }>(authorizer);
const V = 'vehicle-service';

describe('guard marks', () => {
  test('each guard of the kit says what it enforces; wrapped handlers keep the mark', () => {
    expect(guardMarkOf(guards.authenticate())).toEqual({ access: 'authenticated' });
    expect(guardMarkOf(guards.authenticate({ optional: true }))).toEqual({ access: 'public' });
    expect(guardMarkOf(guards.publicRoute())).toEqual({ access: 'public' });
    expect(guardMarkOf(guards.requirePermission(V, 'READ', 'VIN', (req) => req.params.vin))).toEqual({ access: 'permission', mode: 'enforce', scoped: true, permissions: [{ service: V, permission: 'READ', resourceType: 'VIN' }] });
    expect(guardMarkOf(guards.requirePermission(V, 'READ', { node: () => 'N-ROOT' }, { mode: 'report' }))).toEqual({ access: 'permission', mode: 'report', scoped: false, permissions: [{ service: V, permission: 'READ' }] });
    expect(guardMarkOf(guards.requireAnyPermission(V, ['READ', 'WRITE'], 'VIN', (req) => req.params.vin))).toMatchObject({ permissions: [{ permission: 'READ' }, { permission: 'WRITE' }] });
    const handlers = wrapGuards(guards, (guard) => function handler(): unknown { return guard; });
    expect(guardMarkOf(handlers.requirePermission(V, 'WRITE', 'VIN', (req) => req.params.vin))).toMatchObject({ access: 'permission', scoped: true });
    expect(guardMarkOf(handlers.publicRoute())).toEqual({ access: 'public' });
    expect(guardMarkOf(() => undefined)).toBeUndefined();
    // The mark is not enumerable: a handler spread or listed shows nothing new.
    expect(Object.keys(handlers.authenticate())).toEqual([]);
  });

  test('publicRoute() lets every request through, token or not', async () => {
    await expect(guards.publicRoute()(undefined, { params: { vin: 'x' } })).resolves.toBeUndefined();
    await expect(guards.publicRoute()('Bearer garbage', { params: { vin: 'x' } })).resolves.toBeUndefined();
  });

  test('a recorded requirement (NestJS) is marked alike; none recorded is the global guard, or nothing without it', () => {
    const args = parsePermissionArgs('RequirePermission', false, [V, 'READ', 'VIN', (req: { v: string }) => req.v]);
    expect(requirementMark({ kind: 'permission', ...args }, 'enforce')).toMatchObject({ access: 'permission', scoped: true });
    expect(requirementMark({ kind: 'public' }, 'enforce')).toEqual({ access: 'public' });
    expect(requirementMark({ kind: 'authenticated' }, 'enforce')).toEqual({ access: 'authenticated' });
    expect(requirementMark(undefined, 'enforce')).toEqual({ access: 'authenticated' });
    expect(requirementMark(undefined, 'enforce', false)).toBeUndefined();
  });
});

describe('audit', () => {
  const scoped = guardMarkOf(guards.requirePermission(V, 'READ', 'VIN', (req) => req.params.vin));
  const fixed = guardMarkOf(guards.requirePermission(V, 'READ', { node: () => 'N-ROOT' }));
  const report = guardMarkOf(guards.requirePermission(V, 'WRITE', 'VIN', (req) => req.params.vin, { mode: 'report' }));
  const auth = guardMarkOf(guards.authenticate());
  const pub = guardMarkOf(guards.publicRoute());
  const entries: RouteEntry[] = [
    { method: 'GET', path: '/vehicle/{vin}', marks: [undefined, scoped, undefined] },
    { method: 'GET', path: '/fleet/{id}', marks: [fixed] },
    { method: 'GET', path: '/me', marks: [auth] },
    { method: 'GET', path: '/health', marks: [pub] },
    { method: 'GET', path: '/admin/export', marks: [undefined] },
    { method: 'PUT', path: '/vehicle/{vin}', marks: [report] },
    // The same route registered twice: a request may reach either, so the least guarded counts.
    { method: 'GET', path: '/me', marks: [pub] },
  ];

  test('one entry per method and path, its access and permissions; the findings', () => {
    const result = audit('auditRoutes', entries, new Set());
    expect(JSON.parse(JSON.stringify(result))).toStrictEqual(result);
    expect(result.routes).toStrictEqual([
      { method: 'GET', path: '/admin/export', access: 'unguarded', permissions: [] },
      { method: 'GET', path: '/fleet/{id}', access: 'permission', permissions: [{ service: V, permission: 'READ' }] },
      { method: 'GET', path: '/health', access: 'public', permissions: [] },
      { method: 'GET', path: '/me', access: 'public', permissions: [] },
      { method: 'GET', path: '/vehicle/{vin}', access: 'permission', permissions: [{ service: V, permission: 'READ', resourceType: 'VIN' }] },
      // Report mode enforces the token only.
      { method: 'PUT', path: '/vehicle/{vin}', access: 'authenticated', permissions: [] },
    ]);
    expect(result.findings.map(({ kind, method, path }) => ({ kind, method, path }))).toStrictEqual([
      { kind: 'unguarded', method: 'GET', path: '/admin/export' },
      { kind: 'unscoped-parameter', method: 'GET', path: '/fleet/{id}' },
    ]);
    expect(result.findings[1]?.message).toMatch(/\{id\}.*no permission guard on it takes its resource from the request/);
  });

  test('each permission guard found at a route is listed there in the inventory, in place of the unplaced entry', () => {
    const own = createAuthorizer({ baseUrl: 'https://iam.example.test', localJwks: { keys: [{ kty: 'RSA', kid: 'k', n: 'AQAB', e: 'AQAB' }] } });
    const ownGuards = createGuards<{ params: { vin: string } }>(own);
    const read = guardMarkOf(ownGuards.requirePermission(V, 'READ', 'VIN', (req) => req.params.vin));
    const write = guardMarkOf(ownGuards.requirePermission(V, 'WRITE', 'VIN', (req) => req.params.vin, { mode: 'report' }));
    expect(own.inventory().map((e) => e.route)).toEqual([undefined, undefined]);
    audit('auditRoutes', [
      { method: 'GET', path: '/vehicle/{vin}', marks: [read] },
      { method: 'GET', path: '/fleet/vehicles/{vin}', marks: [undefined, read] },
      { method: 'PUT', path: '/vehicle/{vin}', marks: [write] },
    ], new Set());
    expect(own.inventory().map(({ permission, mode, route }) => ({ permission, mode, route }))).toStrictEqual([
      { permission: 'READ', mode: 'enforce', route: { method: 'GET', path: '/fleet/vehicles/{vin}' } },
      { permission: 'READ', mode: 'enforce', route: { method: 'GET', path: '/vehicle/{vin}' } },
      { permission: 'WRITE', mode: 'report', route: { method: 'PUT', path: '/vehicle/{vin}' } },
    ]);
  });

  test('throwOn names each offending route as METHOD /path, and no other', () => {
    const thrown = (kinds: string[]): Error => thrownBy(() => audit('auditRoutes', entries, auditOptions('auditRoutes', { throwOn: kinds })));
    const unguarded = thrown(['unguarded']);
    expect(unguarded.message).toContain('GET /admin/export');
    for (const other of ['/fleet/{id}', '/vehicle/{vin}', '/me', '/health']) expect(unguarded.message).not.toContain(other);
    expect(unguarded).toMatchObject({ code: 'ERR_ROUTE_AUDIT', findings: [{ kind: 'unguarded' }] });
    const unscoped = thrown(['unscoped-parameter']);
    expect(unscoped.message).toContain('GET /fleet/{id}');
    expect(unscoped.message).not.toContain('/admin/export');
    expect(thrown(['unguarded', 'unscoped-parameter']).message).toMatch(/GET \/admin\/export.*GET \/fleet\/\{id\}/);
    expect(() => audit('auditRoutes', entries.slice(2, 4), auditOptions('auditRoutes', { throwOn: ['unguarded'] }))).not.toThrow();
  });

  test('bad options are a TypeError naming them', () => {
    expect(() => auditOptions('auditRoutes', { throwOn: ['everything'] })).toThrow(/auditRoutes: "throwOn" must be an array/);
    expect(() => auditOptions('auditRoutes', { throwOn: 'unguarded' })).toThrow(TypeError);
    expect(() => auditOptions('auditRoutes', { thrownOn: [] })).toThrow(/unknown option "thrownOn"/);
    expect(() => auditOptions('auditRoutes', null)).toThrow(/options must be an object/);
    expect(auditOptions('auditRoutes', undefined).size).toBe(0);
  });
});

describe('OpenAPI paths', () => {
  test('prefixes joined, no trailing slash, parameters in braces', () => {
    expect(openApiPath('/fleet', '/vehicle/:vin')).toBe('/fleet/vehicle/{vin}');
    expect(openApiPath('/fleet/', '/')).toBe('/fleet');
    expect(openApiPath('', '/')).toBe('/');
    expect(openApiPath('/a/:id(\\d+)/b/:opt?')).toBe('/a/{id}/b/{opt}');
    expect(openApiPath('/hono/:id{[0-9]+}')).toBe('/hono/{id}');
    expect(pathParameters('/a/{x}/b/{y}')).toEqual(['x', 'y']);
  });
});
