/**
 * examples/fastify audits itself: its app, built without listening, has no route without a guard
 * or a public mark and no object route that never checks the object (server.ts refuses to start
 * otherwise), and the snapshot shows what guards each route — a change to it shows up in review.
 */
import { createAuthorizer } from 'iam-authz';
import { auditRoutes } from 'iam-authz/fastify';
import { expect, test } from 'vitest';
import { createApp } from '../../examples/fastify/app.js';

test('examples/fastify: every route accounted for', async () => {
  // Never asked anything: auditing reads the routes, it sends no request.
  const authorizer = createAuthorizer({ baseUrl: 'https://iam.example.test', localJwks: { keys: [{ kty: 'RSA', kid: 'k', n: 'AQAB', e: 'AQAB' }] } });
  const app = await createApp(authorizer);
  try {
    await app.ready();
    expect(auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] })).toMatchInlineSnapshot(`
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
  } finally {
    await app.close(); // closes the authorizer too
  }
});
