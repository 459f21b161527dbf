/**
 * The vehicle-service behind `npm start` accounts for its routes on every framework it runs on:
 * each variant, built without listening, has no route without a guard or a public mark and no
 * object route that never checks its object, and all four guard the same routes the same way. A
 * change to a route or its guard changes the snapshot, so it shows in review.
 */
import type { INestApplication } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { createAuthorizer, type Authorizer } from 'iam-authz';
import { auditRoutes as auditExpress } from 'iam-authz/express';
import { auditRoutes as auditFastify } from 'iam-authz/fastify';
import { auditRoutes as auditKoa } from 'iam-authz/koa';
import { auditRoutes as auditNest } from 'iam-authz/nestjs';
import type { RouteAudit } from 'iam-authz/adapter';
import { afterEach, expect, test } from 'vitest';
import { createExpressApp } from '../../examples/vehicle-service/express.js';
import { createFastifyApp } from '../../examples/vehicle-service/fastify.js';
import { createKoaApp } from '../../examples/vehicle-service/koa.js';
import { createNestApp } from '../../examples/vehicle-service/nest.js';

const THROW_ON = { throwOn: ['unguarded', 'unscoped-parameter'] } as const;

/** What each test opened, closed after it. */
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const open of opened.splice(0).reverse()) await open.close();
});

/** Never asked anything: auditing reads the routes, it sends no request. `closedWithApp`: the app closes it. */
function offline(closedWithApp = false): Authorizer {
  const authorizer = createAuthorizer({ baseUrl: 'https://iam.example.test', localJwks: { keys: [{ kty: 'RSA', kid: 'k', n: 'AQAB', e: 'AQAB' }] } });
  if (!closedWithApp) opened.push(authorizer);
  return authorizer;
}

/** Each variant's audit, taken with `throwOn` (a hole would throw, naming the route). */
const audits: Record<'express' | 'koa' | 'fastify' | 'nest', () => Promise<RouteAudit>> = {
  express: async () => auditExpress(createExpressApp(offline()), THROW_ON),
  koa: async () => auditKoa(createKoaApp(offline()), THROW_ON),
  fastify: async () => {
    // The iamAuthz plugin closes the authorizer with the app.
    const app: FastifyInstance = await createFastifyApp(offline(true));
    opened.push(app);
    await app.ready();
    return auditFastify(app, THROW_ON);
  },
  nest: async () => {
    const app: INestApplication = await createNestApp(offline());
    opened.push(app);
    return auditNest(app, THROW_ON);
  },
};

test('examples/vehicle-service on Express: every route guarded, none with an unchecked object', async () => {
  const { routes, findings } = await audits.express();
  expect(findings).toEqual([]);
  expect(routes).toMatchInlineSnapshot(`
    [
      {
        "access": "permission",
        "method": "GET",
        "path": "/vehicle/{vin}",
        "permissions": [
          {
            "permission": "READ",
            "resourceType": "VIN",
            "service": "vehicle-service",
          },
        ],
      },
      {
        "access": "permission",
        "method": "PUT",
        "path": "/vehicle/{vin}",
        "permissions": [
          {
            "permission": "WRITE",
            "resourceType": "VIN",
            "service": "vehicle-service",
          },
        ],
      },
      {
        "access": "authenticated",
        "method": "GET",
        "path": "/vehicles",
        "permissions": [],
      },
    ]
  `);
});

test.each(['koa', 'fastify', 'nest'] as const)('examples/vehicle-service on %s: the same routes, guarded the same way as on Express', async (variant) => {
  const [audit, express] = [await audits[variant](), await audits.express()];
  expect(audit.findings).toEqual([]);
  expect(audit.routes).toStrictEqual(express.routes);
});
