/**
 * `annotateOpenApi` on what `@fastify/swagger` generates, wired as docs/… shows it: the
 * `transformObject` hook annotates the document each time the plugin renders it. The audit is the
 * one every framework's `auditRoutes` must give of this application (test/adapters/audit-expected.ts).
 */
import swagger from '@fastify/swagger';
import { Validator } from '@seriousme/openapi-schema-validator';
import Fastify from 'fastify';
import { expect, test } from 'vitest';
import { annotateOpenApi } from '../../src/adapter/index.js';
import { EXPECTED_AUDIT, SERVICE } from '../adapters/audit-expected.js';

test.each(['3.0.3', '3.1.0'])('@fastify/swagger %s: the rendered document is annotated and validates', async (openapi) => {
  const app = Fastify();
  await app.register(swagger, {
    openapi: { openapi, info: { title: 'vehicle-service', version: '1.0.0' } },
    // In an application: annotateOpenApi(document.openapiObject, auditRoutes(app)); rendered after ready().
    transformObject: (document) => ('openapiObject' in document ? annotateOpenApi(document.openapiObject, EXPECTED_AUDIT) : document.swaggerObject),
  });
  const vin = { type: 'object', properties: { vin: { type: 'string' } }, required: ['vin'] } as const;
  const ok = { 200: { type: 'object', properties: { vin: { type: 'string' } } } } as const;
  app.get('/vehicle/:vin', { schema: { params: vin, response: ok } }, () => ({}));
  app.put('/vehicle/:vin', { schema: { params: vin } }, () => ({}));
  app.get('/health', () => ({ ok: true }));
  app.get('/docs-only', () => ({}));
  await app.register((fleet, _, done) => {
    fleet.get('/summary', () => ({}));
    done();
  }, { prefix: '/fleet' });
  await app.ready();
  try {
    const doc = app.swagger() as Record<string, any>;
    expect(doc.openapi).toBe(openapi);
    const read = doc.paths['/vehicle/{vin}'].get;
    expect(read.security).toStrictEqual([{ iamBearer: [] }]);
    expect(read['x-iam-permissions']).toStrictEqual([{ service: SERVICE, permission: 'READ', resourceType: 'VIN' }]);
    expect(Object.keys(read.responses)).toStrictEqual(['200', '401', '403', '503']);
    expect(doc.paths['/fleet/summary'].get.security).toStrictEqual([{ iamBearer: [] }]);
    expect(doc.paths['/health'].get.security).toBeUndefined();
    expect(doc.paths['/docs-only'].get.security).toBeUndefined();
    // Routes the generator did not see (here: registered without it) are added from the audit.
    expect(doc.paths['/fleet/vehicles/{vin}'].get.parameters).toStrictEqual([{ name: 'vin', in: 'path', required: true, schema: { type: 'string' } }]);
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  } finally {
    await app.close();
  }
});
