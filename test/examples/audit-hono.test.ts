/**
 * examples/hono audits itself: the snapshot is the audit a reviewer reads (every route, what
 * guards it), and the example's server refuses to start on any finding — here there is none.
 */
import { createAuthorizer } from 'iam-authz';
import { auditRoutes } from 'iam-authz/hono';
import { afterAll, expect, test } from 'vitest';
import { createApp } from '../../examples/hono/app.js';

const authorizer = createAuthorizer({ baseUrl: 'https://iam.example.test', localJwks: { keys: [{ kty: 'RSA', kid: 'k', n: 'AQAB', e: 'AQAB' }] } });
afterAll(async () => { await authorizer.close(); });

test('examples/hono: every route accounted for, nothing to fix', () => {
  const app = createApp(authorizer);
  expect(auditRoutes(app)).toMatchInlineSnapshot(`
    {
      "findings": [],
      "routes": [
        {
          "access": "public",
          "method": "GET",
          "path": "/health",
          "permissions": [],
        },
        {
          "access": "permission",
          "method": "GET",
          "path": "/vehicles/{vin}",
          "permissions": [
            {
              "permission": "READ",
              "resourceType": "VIN",
              "service": "vehicle-service",
            },
          ],
        },
      ],
    }
  `);
  expect(() => auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] })).not.toThrow();
});

test('a route added without a guard stops the example from starting, named in the error', () => {
  const app = createApp(authorizer);
  app.get('/debug/:vin', (c) => c.text(c.req.param('vin')));
  expect(() => auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] })).toThrow(/^auditRoutes: 1 route to fix \(unguarded\): GET \/debug\/\{vin\}$/);
});
