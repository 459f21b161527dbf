/**
 * `annotateOpenApi`: the route audit written into an OpenAPI 3.0 and 3.1 document. Every result is
 * checked by a standard validator (@seriousme/openapi-schema-validator: the official schemas of
 * both versions, and every local `$ref` resolved) and for the one thing that does not check,
 * path parameters declared; the input is frozen, so that a single write to it throws.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { annotateOpenApi, type RouteAudit } from '../../src/adapter/index.js';
import { EXPECTED_AUDIT, SERVICE } from '../adapters/audit-expected.js';

type Doc = Record<string, any>;

/** What a generator makes of the audited application (test/adapters/audit-expected.ts), and more. */
function generated(openapi: string): Doc {
  return {
    openapi,
    info: { title: 'vehicle-service', version: '1.0.0' },
    'x-owner': 'fleet team',
    paths: {
      // Another parameter name than the audit's /vehicle/{vin}: the same path to OpenAPI.
      '/vehicle/{id}': {
        parameters: [{ $ref: '#/components/parameters/VehicleId' }],
        get: {
          operationId: 'readVehicle',
          responses: { 200: { description: 'the vehicle' }, 401: { description: 'our own words for it' } },
        },
      },
      '/health': { get: { responses: { 200: { description: 'alive' } } } },
      '/me': { get: { security: [{ apiKey: [] }, {}], responses: { 200: { description: 'the caller' } } } },
      '/docs': { get: { responses: { 200: { description: 'not in the audit' } } } },
      'x-internal': { note: 'an extension, not a path' },
    },
    components: {
      parameters: { VehicleId: { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Z0-9]{17}$' } } },
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      schemas: { Vehicle: { type: 'object' } },
    },
  };
}

/** One validator: it compiles each version's schema once. */
const validator = new Validator();

/** The document validates against its version's schema, and every `{name}` of a path is declared `in: path`. */
async function expectValid(doc: Doc): Promise<void> {
  const result = await validator.validate(structuredClone(doc));
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  expect(result.valid).toBe(true);
  const declared = (parameters: any[] = []): string[] => parameters
    .map((p) => (p.$ref ? doc.components.parameters[String(p.$ref).split('/').pop()!] : p))
    .filter((p) => p.in === 'path').map((p) => p.name);
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    if (!path.startsWith('/')) continue;
    const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const method of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']) {
      if (!item[method]) continue;
      const all = [...declared(item.parameters), ...declared(item[method].parameters)];
      for (const name of names) expect(all, `${method.toUpperCase()} ${path} declares {${name}}`).toContain(name);
    }
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

const UNAUTHORIZED = { $ref: '#/components/responses/IamUnauthorized' };
const FORBIDDEN = { $ref: '#/components/responses/IamForbidden' };
const UNAVAILABLE = { $ref: '#/components/responses/IamUnavailable' };
const BEARER = [{ iamBearer: [] }];

describe.each(['3.0.3', '3.1.0'])('OpenAPI %s', (version) => {
  const input = deepFreeze(generated(version));
  const before = structuredClone(input);
  const doc = annotateOpenApi(input, EXPECTED_AUDIT);

  test('the result validates; the input is untouched and the version kept', async () => {
    expect(input).toStrictEqual(before);
    expect(doc).not.toBe(input);
    expect(doc.openapi).toBe(version);
    await expectValid(doc);
  });

  test('a permission route: bearer security, its permissions, 401/403/503; a response the document had is kept', () => {
    const get = doc.paths['/vehicle/{id}'].get;
    expect(get.security).toStrictEqual(BEARER);
    expect(get['x-iam-permissions']).toStrictEqual([{ service: SERVICE, permission: 'READ', resourceType: 'VIN' }]);
    expect(get.responses).toStrictEqual({ 200: { description: 'the vehicle' }, 401: { description: 'our own words for it' }, 403: FORBIDDEN, 503: UNAVAILABLE });
    expect(get.operationId).toBe('readVehicle');
    // A node-id guard has no resource type, and says none.
    expect(doc.paths['/depots/{depotId}'].get['x-iam-permissions']).toStrictEqual([{ service: SERVICE, permission: 'READ' }]);
  });

  test('audit paths match document paths by template; a missing operation is added with its parameters', () => {
    expect(Object.keys(doc.paths)).not.toContain('/vehicle/{vin}');
    // PUT /vehicle/{vin} joins /vehicle/{id}, whose Path Item already declares {id}.
    expect(doc.paths['/vehicle/{id}'].put).toStrictEqual({ responses: { 401: UNAUTHORIZED, 403: FORBIDDEN, 503: UNAVAILABLE }, security: BEARER, 'x-iam-permissions': [{ service: SERVICE, permission: 'WRITE', resourceType: 'VIN' }] });
    expect(doc.paths['/fleet/vehicles/{vin}'].get.parameters).toStrictEqual([{ name: 'vin', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(doc.paths['/fleet/summary'].get).toStrictEqual({ responses: { 401: UNAUTHORIZED, 503: UNAVAILABLE }, security: BEARER });
    // A route no guard enforces is documented as it is: no security, a default response.
    expect(doc.paths['/admin/export'].get).toStrictEqual({ responses: { default: { description: expect.any(String) } } });
  });

  test('an authenticated route keeps its own requirements, the bearer added to each', () => {
    expect(doc.paths['/me'].get.security).toStrictEqual([{ apiKey: [], iamBearer: [] }, { iamBearer: [] }]);
    expect(doc.paths['/me'].get['x-iam-permissions']).toBeUndefined();
    expect(doc.paths['/me'].get.responses).toStrictEqual({ 200: { description: 'the caller' }, 401: UNAUTHORIZED, 503: UNAVAILABLE });
  });

  test('public routes and operations not in the audit stay as they were, as does everything else', () => {
    expect(doc.paths['/health']).toStrictEqual(before.paths['/health']);
    expect(doc.paths['/docs']).toStrictEqual(before.paths['/docs']);
    expect(doc.paths['x-internal']).toStrictEqual(before.paths['x-internal']);
    expect(doc['x-owner']).toBe('fleet team');
    expect(doc.info).toStrictEqual(before.info);
    expect(doc.components.parameters).toStrictEqual(before.components.parameters);
    expect(doc.components.schemas.Vehicle).toStrictEqual({ type: 'object' });
    expect(doc.components.securitySchemes).toStrictEqual({ ...before.components.securitySchemes, iamBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } });
  });

  test('the problem responses: application/problem+json, each with a description', () => {
    for (const name of ['IamUnauthorized', 'IamForbidden', 'IamUnavailable']) {
      const response = doc.components.responses[name];
      expect(response.description).toMatch(/\w/);
      expect(response.content['application/problem+json'].schema).toStrictEqual({ $ref: '#/components/schemas/IamProblem' });
    }
    expect(Object.keys(doc.components.responses.IamUnauthorized.headers)).toStrictEqual(['WWW-Authenticate']);
    expect(Object.keys(doc.components.responses.IamUnavailable.headers)).toStrictEqual(['Retry-After']);
    expect(doc.components.schemas.IamProblem.required).toStrictEqual(['type', 'title', 'status', 'detail', 'code']);
  });

  test('annotating twice changes nothing more; two results share no object', () => {
    expect(annotateOpenApi(doc, EXPECTED_AUDIT)).toStrictEqual(doc);
    const other = annotateOpenApi(input, EXPECTED_AUDIT);
    other.components.responses.IamUnauthorized.description = 'changed';
    other.paths['/me'].get.security[0].apiKey.push('x');
    expect(annotateOpenApi(input, EXPECTED_AUDIT)).toStrictEqual(doc);
  });
});

describe('documents without what is needed', () => {
  test('a document with no paths and no components gets both; no guarded route, no problem responses', async () => {
    const bare = { openapi: '3.1.0', info: { title: 't', version: '1' } };
    const doc = annotateOpenApi(bare, EXPECTED_AUDIT) as Doc;
    expect(Object.keys(doc.paths)).toStrictEqual(EXPECTED_AUDIT.routes.map((r) => r.path).filter((p, i, all) => all.indexOf(p) === i));
    await expectValid(doc);
    const publicOnly: RouteAudit = { routes: [{ method: 'GET', path: '/health', access: 'public', permissions: [] }], findings: [] };
    const plain = annotateOpenApi({ ...bare, openapi: '3.0.3', paths: {} }, publicOnly) as Doc;
    expect(plain.components).toStrictEqual({ securitySchemes: { iamBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } });
    await expectValid(plain);
  });

  test('components of the same names are the application\'s own: kept, and referenced', async () => {
    const mine = { description: 'ours', content: { 'application/problem+json': { schema: { type: 'object' } } } };
    const doc = annotateOpenApi({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: {}, components: { responses: { IamUnauthorized: mine }, securitySchemes: { iamBearer: { type: 'apiKey', in: 'header', name: 'x', description: 'kept', 'x-a': 1 } } } }, EXPECTED_AUDIT) as Doc;
    expect(doc.components.responses.IamUnauthorized).toStrictEqual(mine);
    expect(doc.components.securitySchemes.iamBearer).toStrictEqual({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'kept', 'x-a': 1 });
    await expectValid(doc);
  });

  test('the document\'s own security is what a guarded operation without one inherits: kept, bearer added', () => {
    const doc = annotateOpenApi({ openapi: '3.1.0', info: { title: 't', version: '1' }, security: [{ apiKey: [] }], paths: { '/me': { get: { responses: { 200: { description: 'x' } } } }, '/open': { get: { security: [], responses: { 200: { description: 'x' } } } } } }, {
      routes: [{ method: 'GET', path: '/me', access: 'authenticated', permissions: [] }, { method: 'GET', path: '/open', access: 'authenticated', permissions: [] }], findings: [],
    }) as Doc;
    expect(doc.paths['/me'].get.security).toStrictEqual([{ apiKey: [], iamBearer: [] }]);
    expect(doc.paths['/open'].get.security).toStrictEqual(BEARER);
    expect(doc.security).toStrictEqual([{ apiKey: [] }]);
  });

  test('two document paths of one template: the route goes to the one holding its method; methods OpenAPI lacks are left out', async () => {
    const doc = annotateOpenApi({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {
      '/a/{x}': { get: { parameters: [{ name: 'x', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'x' } } } },
      '/a/{y}': { put: { parameters: [{ name: 'y', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'y' } } } },
    } }, { routes: [
      { method: 'PUT', path: '/a/{z}', access: 'authenticated', permissions: [] },
      { method: 'DELETE', path: '/a/{y}', access: 'authenticated', permissions: [] },
      { method: 'PROPFIND', path: '/a/{x}', access: 'authenticated', permissions: [] },
    ], findings: [] }) as Doc;
    expect(doc.paths['/a/{y}'].put.security).toStrictEqual(BEARER);
    expect(doc.paths['/a/{x}'].put).toBeUndefined();
    expect(doc.paths['/a/{y}'].delete.parameters).toStrictEqual([{ name: 'y', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(Object.keys(doc.paths)).toStrictEqual(['/a/{x}', '/a/{y}']);
    expect(JSON.stringify(doc)).not.toContain('propfind');
    await expectValid(doc);
  });
});

describe('hostile input: a TypeError naming what is wrong, and nothing polluted', () => {
  const info = { title: 't', version: '1' };
  const audit: RouteAudit = { routes: [{ method: 'GET', path: '/a/{id}', access: 'permission', permissions: [{ service: 's', permission: 'P' }] }], findings: [] };

  test.each([
    ['null', null, /"document" must be an OpenAPI 3\.0 or 3\.1 document \(an object\), not null/],
    ['an array', [], /not an array/],
    ['a string', '{"openapi":"3.1.0"}', /not string/],
    ['no openapi field', { info, paths: {} }, /no "openapi" field/],
    ['Swagger 2.0', { swagger: '2.0', info, paths: {} }, /Swagger 2\.0/],
    ['OpenAPI 3.2', { openapi: '3.2.0', info, paths: {} }, /document\.openapi is "3\.2\.0": only OpenAPI 3\.0\.x and 3\.1\.x/],
    ['a number as version', { openapi: 3.1, info }, /document\.openapi is number/],
    ['paths an array', { openapi: '3.1.0', info, paths: [] }, /document\.paths is not an object/],
    ['components a string', { openapi: '3.1.0', info, components: 'x' }, /document\.components is not an object/],
    ['a path item that is no object', { openapi: '3.1.0', info, paths: { '/a/{id}': 'x' } }, /document\.paths\["\/a\/\{id\}"\] is not a Path Item object/],
    ['an operation that is no object', { openapi: '3.1.0', info, paths: { '/a/{id}': { get: [] } } }, /document\.paths\["\/a\/\{id\}"\]\.get is not an Operation object/],
    ['responses that are no object', { openapi: '3.1.0', info, paths: { '/a/{x}': { get: { responses: 'x' } } } }, /document\.paths\["\/a\/\{x\}"\]\.get\.responses is not an object/],
    ['security that is no array', { openapi: '3.1.0', info, paths: { '/a/{x}': { get: { security: {} } } } }, /document\.paths\["\/a\/\{x\}"\]\.get\.security is not an array/],
    ['a referenced path item', { openapi: '3.1.0', info, paths: { '/a/{x}': { $ref: '#/components/pathItems/A' } } }, /is a \$ref: resolve it/],
    ['securitySchemes that are no object', { openapi: '3.1.0', info, components: { securitySchemes: [] } }, /document\.components\.securitySchemes is not an object/],
    ['a function inside', { openapi: '3.1.0', info, paths: { '/b': { get: { responses: { 200: { description: 'x', f() {} } } } } } }, /cannot be copied, it is not plain JSON/],
  ])('%s', (_, document, message) => {
    expect(() => annotateOpenApi(document as object, audit)).toThrow(TypeError);
    expect(() => annotateOpenApi(document as object, audit)).toThrow(message);
  });

  test.each([
    ['null', null, /"audit" must be a route audit/],
    ['routes missing', {}, /"audit" must be a route audit/],
    ['a route that is no object', { routes: [1] }, /audit\.routes\[0\] is not an object/],
    ['a bad method', { routes: [{ method: 'G ET', path: '/', access: 'public', permissions: [] }] }, /audit\.routes\[0\]\.method/],
    ['a relative path', { routes: [{ method: 'GET', path: 'a', access: 'public', permissions: [] }] }, /audit\.routes\[0\]\.path/],
    ['an unknown access', { routes: [{ method: 'GET', path: '/', access: 'open', permissions: [] }] }, /audit\.routes\[0\]\.access/],
    ['permissions of the wrong shape', { routes: [{ method: 'GET', path: '/', access: 'permission', permissions: [{ service: 1 }] }] }, /audit\.routes\[0\]\.permissions/],
    ['a permission route without permissions', { routes: [{ method: 'GET', path: '/', access: 'permission', permissions: [] }] }, /exactly when its access is 'permission'/],
  ])('an audit: %s', (_, bad, message) => {
    expect(() => annotateOpenApi({ openapi: '3.1.0', info, paths: {} }, bad as unknown as RouteAudit)).toThrow(TypeError);
    expect(() => annotateOpenApi({ openapi: '3.1.0', info, paths: {} }, bad as unknown as RouteAudit)).toThrow(message);
  });

  test('__proto__ and constructor as path keys are refused; as path segments they are paths like any other', async () => {
    for (const key of ['__proto__', 'constructor']) {
      const document = JSON.parse(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"${key}":{"get":{"polluted":true}}}}`);
      expect(() => annotateOpenApi(document, audit)).toThrow(new TypeError(`annotateOpenApi: document.paths has a key "${key}" that is not a path (a path starts with "/")`));
    }
    const document = JSON.parse('{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/__proto__":{"get":{"responses":{"200":{"description":"x"}}}}},"components":{"responses":{"__proto__":{"description":"x","x-polluted":true}}}}');
    const doc = annotateOpenApi(document, { routes: [
      { method: 'GET', path: '/__proto__', access: 'authenticated', permissions: [] },
      { method: 'GET', path: '/constructor/{__proto__}', access: 'permission', permissions: [{ service: '__proto__', permission: 'constructor' }] },
    ], findings: [] }) as Doc;
    expect(({} as Record<string, unknown>)['x-polluted']).toBeUndefined();
    expect(({} as Record<string, unknown>).get).toBeUndefined();
    expect(Object.keys(doc.paths)).toStrictEqual(['/__proto__', '/constructor/{__proto__}']);
    expect(Object.hasOwn(doc.components.responses, '__proto__')).toBe(true);
    expect(doc.paths['/constructor/{__proto__}'].get.parameters[0].name).toBe('__proto__');
    await expectValid(doc);
  });

  test('nesting too deep to copy is a TypeError, not a RangeError', () => {
    let deep: Record<string, unknown> = {};
    const document = { openapi: '3.1.0', info, paths: {}, 'x-deep': deep };
    for (let i = 0; i < 200_000; i++) { const next: Record<string, unknown> = {}; deep.a = next; deep = next; }
    expect(() => annotateOpenApi(document, audit)).toThrow(/cannot be copied/);
  });

  test('time grows in proportion to the document and the audit: 8 times the paths, far less than 64 times the time', () => {
    const input = (n: number): [Doc, RouteAudit] => {
      const paths: Doc = {};
      const routes: RouteAudit['routes'][number][] = [];
      for (let i = 0; i < n; i++) {
        paths[`/r${i}/{id}`] = { get: { responses: { 200: { description: 'x' } } } };
        // Many paths of one template too (an invalid document, but one that must not be slow either).
        paths[`/same/{p${i}}`] = { get: { responses: { 200: { description: 'x' } } } };
        routes.push({ method: 'GET', path: `/r${i}/{key}`, access: 'permission', permissions: [{ service: 's', permission: 'P' }] });
        routes.push({ method: 'PUT', path: `/new${i}/{key}`, access: 'authenticated', permissions: [] });
        routes.push({ method: 'POST', path: `/same/{q${i}}`, access: 'authenticated', permissions: [] });
      }
      return [{ openapi: '3.1.0', info, paths }, { routes, findings: [] }];
    };
    /** The faster of two runs, in ms: the machine may be busy with other tests. */
    const time = (n: number): number => {
      const [document, audit] = input(n);
      let best = Infinity;
      for (let run = 0; run < 2; run++) {
        const started = performance.now();
        const doc = annotateOpenApi(document, audit);
        best = Math.min(best, performance.now() - started);
        expect(Object.keys(doc.paths)).toHaveLength(3 * n);
        expect(doc.paths[`/r${n - 1}/{id}`].get.security).toStrictEqual(BEARER);
        expect(doc.paths['/same/{p0}'].post.security).toStrictEqual(BEARER);
      }
      return best;
    };
    time(500);
    const small = time(1_000);
    const large = time(8_000);
    // Linear: about 8 times; quadratic matching: about 64 times.
    expect(large / Math.max(small, 1)).toBeLessThan(24);
  }, 60_000);

  test('property: any document and any audit give a document or a TypeError, never anything else', () => {
    const keys = fc.constantFrom('openapi', 'info', 'paths', 'components', 'security', '__proto__', 'constructor', '/a/{x}', '/a/{y}', 'get', 'put', 'responses', 'parameters', 'securitySchemes', 'iamBearer', '$ref', 'x-y');
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.constantFrom('3.0.3', '3.1.0', '3.2.0', '/a/{x}', 'path', null, 1, true), fc.array(tie('value'), { maxLength: 3 }), tie('object')),
      object: fc.dictionary(keys, tie('value'), { maxKeys: 5 }),
    }));
    const route = fc.record({
      method: fc.constantFrom('GET', 'put', 'PROPFIND', '', 'G ET'),
      path: fc.constantFrom('/a/{x}', '/a/{z}', '/b', '/__proto__', 'a'),
      access: fc.constantFrom('permission', 'authenticated', 'public', 'unguarded', 'other'),
      permissions: fc.constantFrom([], [{ service: 's', permission: 'P' }], [{ service: 's' }]),
    });
    fc.assert(fc.property(json.object, fc.option(fc.array(route, { maxLength: 4 })), (document, routes) => {
      try {
        const out = annotateOpenApi(JSON.parse(JSON.stringify(document)) as object, { routes: routes ?? [], findings: [] } as RouteAudit);
        expect(typeof out).toBe('object');
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
        expect((error as Error).message).toMatch(/^annotateOpenApi: /);
      }
      expect(({} as Record<string, unknown>).get).toBeUndefined();
    }), { numRuns: 500 });
  });

  test('property: any valid audit over a valid document gives a valid document', async () => {
    const segment = fc.constantFrom('a', 'b', '{x}', '{y}', '__proto__');
    const route = fc.record({
      method: fc.constantFrom('GET', 'PUT', 'POST', 'DELETE'),
      path: fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => `/${s.join('/')}`),
      access: fc.constantFrom('permission', 'authenticated', 'public', 'unguarded'),
    }).map(({ access, ...rest }) => ({ ...rest, access, permissions: access === 'permission' ? [{ service: SERVICE, permission: 'READ' }] : [] }));
    await fc.assert(fc.asyncProperty(fc.constantFrom('3.0.3', '3.1.0'), fc.array(route, { maxLength: 6 }), fc.array(route, { maxLength: 6 }), async (version, existing, audited) => {
      const paths: Doc = {};
      for (const { method, path } of existing) {
        const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).filter((n, i, all) => all.indexOf(n) === i);
        const template = path.replace(/\{[^}]+\}/g, '{}');
        // A valid document has one path per template.
        const key = Object.keys(paths).find((k) => k.replace(/\{[^}]+\}/g, '{}') === template) ?? path;
        const params = [...key.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).filter((n, i, all) => all.indexOf(n) === i);
        paths[key] ??= {};
        paths[key][method.toLowerCase()] = { parameters: params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })), responses: { 200: { description: names.join() || 'ok' } } };
      }
      const seen = new Set<string>();
      const routes = audited.filter((r) => !seen.has(`${r.method} ${r.path}`) && seen.add(`${r.method} ${r.path}`));
      const doc = annotateOpenApi({ openapi: version, info, paths }, { routes, findings: [] }) as Doc;
      await expectValid(doc);
    }), { numRuns: 60 });
  });
});
