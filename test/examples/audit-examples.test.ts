/**
 * The Express, Fastify, Hono and Koa examples audit themselves: each app, built without listening,
 * has exactly the routes below with the guards shown — a change to a route or its guard changes
 * this file, so it shows in review — and no finding, which is also what each example's server.ts
 * asks for (`throwOn`) before it listens. (The NestJS example has its own file: other routes.)
 */
import { readFile } from 'node:fs/promises';
import { createAuthorizer, type Authorizer } from 'iam-authz';
import type { RouteAudit } from 'iam-authz/adapter';
import { auditRoutes as auditExpress } from 'iam-authz/express';
import { auditRoutes as auditFastify } from 'iam-authz/fastify';
import { auditRoutes as auditHono } from 'iam-authz/hono';
import { auditRoutes as auditKoa } from 'iam-authz/koa';
import { expect, test } from 'vitest';
import { createApp as expressApp } from '../../examples/express/app.js';
import { createApp as fastifyApp } from '../../examples/fastify/app.js';
import { createApp as honoApp } from '../../examples/hono/app.js';
import { app as koaApp, authorizer as koaAuthorizer } from '../../examples/koa/app.js';

const THROW_ON = { throwOn: ['unguarded', 'unscoped-parameter'] } as const;

/** Every example's routes: one public on purpose, one object route whose guard reads the object. */
const EXPECTED: RouteAudit = {
  findings: [],
  routes: [
    { access: 'public', method: 'GET', path: '/health', permissions: [] },
    { access: 'permission', method: 'GET', path: '/vehicles/{vin}', permissions: [{ service: 'vehicle-service', permission: 'READ', resourceType: 'VIN' }] },
  ],
};

/** Never asked anything: auditing reads the routes, it sends no request. */
const offline = (): Authorizer => createAuthorizer({ baseUrl: 'https://iam.example.test', localJwks: { keys: [{ kty: 'RSA', kid: 'k', n: 'AQAB', e: 'AQAB' }] } });

const examples: [string, () => Promise<RouteAudit>][] = [
  ['express', async () => {
    const authorizer = offline();
    try {
      return auditExpress(expressApp(authorizer), THROW_ON);
    } finally {
      await authorizer.close();
    }
  }],
  ['fastify', async () => {
    const app = await fastifyApp(offline());
    try {
      await app.ready();
      return auditFastify(app, THROW_ON);
    } finally {
      await app.close(); // closes the authorizer too
    }
  }],
  ['hono', async () => {
    const authorizer = offline();
    try {
      return auditHono(honoApp(authorizer), THROW_ON);
    } finally {
      await authorizer.close();
    }
  }],
  ['koa', async () => {
    try {
      return auditKoa(koaApp, THROW_ON);
    } finally {
      await koaAuthorizer.close();
    }
  }],
];

test.each(examples)('examples/%s: every route guarded, or public on purpose; no finding', async (_name, audit) => {
  expect(await audit()).toStrictEqual(EXPECTED);
});

test.each(examples.map(([name]) => name))('examples/%s/server.ts audits with throwOn before it listens', async (name) => {
  const server = await readFile(new URL(`../../examples/${name}/server.ts`, import.meta.url), 'utf8');
  const audit = server.indexOf("auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] })");
  expect(audit).toBeGreaterThan(0);
  const listen = Math.max(server.indexOf('.listen('), server.indexOf('serve('));
  expect(listen).toBeGreaterThan(audit);
});

test('a route added without a guard stops an example from starting, named in the error', () => {
  const authorizer = offline();
  const app = honoApp(authorizer);
  app.get('/debug/:vin', (c) => c.text(c.req.param('vin')));
  expect(() => auditHono(app, THROW_ON)).toThrow(/^auditRoutes: 1 route to fix \(unguarded\): GET \/debug\/\{vin\}$/);
  void authorizer.close();
});
