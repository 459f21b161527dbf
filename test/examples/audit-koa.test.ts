/**
 * examples/koa audits itself: the audit of its app, as a snapshot a reviewer sees change when a
 * route is added or its guard changes (its server.ts refuses to start on a finding).
 */
import { afterAll, expect, test } from 'vitest';
import { auditRoutes } from 'iam-authz/koa';
import { app, authorizer } from '../../examples/koa/app.js';

afterAll(() => authorizer.close());

test('examples/koa: every route guarded, or public on purpose; no finding', () => {
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
});
