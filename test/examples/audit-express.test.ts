/**
 * examples/express audits itself: the snapshot is every route of the example with what guards it,
 * and the example refuses to start with a hole (server.ts audits with `throwOn` before listening).
 */
import { readFile } from 'node:fs/promises';
import { createAuthorizer } from 'iam-authz';
import { auditRoutes } from 'iam-authz/express';
import { expect, test } from 'vitest';
import { createApp } from '../../examples/express/app.js';

test('examples/express: every route guarded, or public on purpose', async () => {
  const authorizer = createAuthorizer({ baseUrl: 'http://127.0.0.1:9' });
  try {
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
  } finally {
    await authorizer.close();
  }
  const server = await readFile(new URL('../../examples/express/server.ts', import.meta.url), 'utf8');
  expect(server.indexOf("auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] })")).toBeGreaterThan(0);
  expect(server.indexOf("auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] })")).toBeLessThan(server.indexOf('app.listen('));
});
