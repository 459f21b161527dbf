/**
 * The same small vehicle app in Express 5, Express 4, Koa and Fastify, each guarded by its
 * adapter, so that one scenario table can run against all of them over real HTTP.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import express4 from 'express4';
import Koa from 'koa';
import Router from '@koa/router';
import Fastify from 'fastify';
import type { Authorizer } from '../../src/index.js';
import type { GuardOptions } from '../../src/adapter/index.js';
import { expressAuthz } from '../../adapters/express/index.js';
import { koaAuthz } from '../../adapters/koa/index.js';
import { fastifyAuthz, iamAuthz } from '../../adapters/fastify/index.js';
import { startFetchApp, startHonoApp } from './apps-fetch.js';
import { startNestApp } from './apps-nest.js';

export interface RunningApp {
  url: string;
  /** How many times a route handler ran. */
  handled: { count: number };
  close(): Promise<void>;
}

/** Guard options shared by all frameworks, plus Express's `passErrors`. */
export type AppOptions = GuardOptions & { passErrors?: boolean };
export type Framework = 'express' | 'express4' | 'koa' | 'fastify' | 'hono' | 'fetch' | 'nest-express' | 'nest-fastify';
export const FRAMEWORKS: readonly Framework[] = ['express', 'express4', 'koa', 'fastify', 'hono', 'fetch', 'nest-express', 'nest-fastify'];

const boom = (): string => { throw new Error('resolver failed'); };
const later = (v: string | undefined): Promise<string | undefined> => new Promise((r) => setTimeout(() => { r(v); }, 5));

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => { resolve(); }));
}

function buildExpress(make: typeof express, authorizer: Authorizer, options: AppOptions) {
  const handled = { count: 0 };
  const app = make();
  const { authenticate, requirePermission, requireAnyPermission } = expressAuthz(authorizer, { realm: 'vehicle-service', ...options });
  const vin = (req: express.Request) => req.params.vin as string;
  const reply = (req: express.Request, res: express.Response) => {
    handled.count++;
    res.json({ sub: req.iam?.claims.sub, decision: req.iam?.decision ?? null, params: req.params, shadow: req.iam?.shadow ?? false, anonymous: req.iam === undefined });
  };
  app.get('/vehicle/:vin', requirePermission('vehicle-service', 'READ', 'VIN', vin), reply);
  app.put('/vehicle/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', vin), reply);
  app.get('/async/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (req) => later(req.params.vin as string)), reply);
  app.get('/throws/:vin', requirePermission('vehicle-service', 'READ', 'VIN', boom), reply);
  app.get('/node/:id', requirePermission('vehicle-service', 'READ', { node: (req) => req.params.id as string }), reply);
  app.get('/multi', requirePermission('vehicle-service', 'READ', 'VIN', () => ['WVW1', 'WVW2']), reply);
  app.get('/empty', requirePermission('vehicle-service', 'READ', 'VIN', () => undefined), reply);
  app.get('/me', authenticate(), reply);
  app.options('/me', authenticate(), (req, res) => { handled.count++; res.status(204).end(); });
  app.get('/optional', authenticate({ optional: true }), reply);
  app.get('/any/:vin', requireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', vin), reply);
  app.get('/anymulti', requireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', () => ['WVW1', 'WVW2']), reply);
  app.get('/shadow/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', vin, { mode: 'report' }), reply);
  app.get('/enforced/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', vin, { mode: 'enforce' }), reply);
  app.use((err: Error & { status?: number; headers?: Record<string, string> }, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    // Only reached with passErrors: render the IamAuthzError as the app likes.
    res.status(err.status ?? 500).set(err.headers ?? {}).json({ custom: true, message: err.message });
  });
  return { app, handled };
}

export async function startApp(framework: Framework, authorizer: Authorizer, options: AppOptions = {}): Promise<RunningApp> {
  if (framework === 'hono') return startHonoApp(authorizer, options);
  if (framework === 'fetch') return startFetchApp(authorizer, options);
  if (framework === 'nest-express' || framework === 'nest-fastify') return startNestApp(framework === 'nest-express' ? 'express' : 'fastify', authorizer, options);
  if (framework === 'express' || framework === 'express4') {
    const { app, handled } = buildExpress((framework === 'express' ? express : express4), authorizer, options);
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, handled, close: () => closeServer(server) };
  }
  if (framework === 'koa') {
    const handled = { count: 0 };
    const app = new Koa();
    app.silent = true;
    const router = new Router();
    const { passErrors: _unused, ...koaOptions } = options;
    const { authenticate, requirePermission, requireAnyPermission } = koaAuthz(authorizer, { realm: 'vehicle-service', ...koaOptions });
    const reply = (ctx: Koa.Context) => {
      handled.count++;
      ctx.body = { sub: ctx.state.iam?.claims.sub, decision: ctx.state.iam?.decision ?? null, params: ctx.params, shadow: ctx.state.iam?.shadow ?? false, anonymous: ctx.state.iam === undefined };
    };
    router.get('/vehicle/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (ctx) => ctx.params.vin), reply);
    router.put('/vehicle/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', (ctx) => ctx.params.vin), reply);
    router.get('/async/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (ctx) => later(ctx.params.vin)), reply);
    router.get('/throws/:vin', requirePermission('vehicle-service', 'READ', 'VIN', boom), reply);
    router.get('/node/:id', requirePermission('vehicle-service', 'READ', { node: (ctx) => ctx.params.id }), reply);
    router.get('/multi', requirePermission('vehicle-service', 'READ', 'VIN', () => ['WVW1', 'WVW2']), reply);
    router.get('/empty', requirePermission('vehicle-service', 'READ', 'VIN', () => undefined), reply);
    router.get('/me', authenticate(), reply);
    router.options('/me', authenticate(), (ctx) => { handled.count++; ctx.status = 204; });
    router.get('/optional', authenticate({ optional: true }), reply);
    router.get('/any/:vin', requireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', (ctx) => ctx.params.vin), reply);
    router.get('/anymulti', requireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', () => ['WVW1', 'WVW2']), reply);
    router.get('/shadow/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', (ctx) => ctx.params.vin, { mode: 'report' }), reply);
    router.get('/enforced/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', (ctx) => ctx.params.vin, { mode: 'enforce' }), reply);
    app.use(router.routes());
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, handled, close: () => closeServer(server) };
  }
  const handled = { count: 0 };
  const app = Fastify();
  const { passErrors: _ignored, ...guardOptions } = options;
  const hooks = fastifyAuthz(authorizer, { realm: 'vehicle-service', ...guardOptions });
  // The plugin decorates request.iam; its authorizer is closed with the app, so give it a throwaway.
  await app.register(iamAuthz, { authorizer: { ...authorizer, close: async () => {} } });
  const { authenticate, requirePermission, requireAnyPermission } = hooks;
  type Req = { params: Record<string, string>; iam: { claims: { sub: string }; decision?: unknown; shadow?: boolean } | null };
  const reply = async (req: Req) => {
    handled.count++;
    return { sub: req.iam?.claims.sub, decision: req.iam?.decision ?? null, params: req.params, shadow: req.iam?.shadow ?? false, anonymous: req.iam === null };
  };
  const param = (name: string) => (req: { params: unknown }) => (req.params as Record<string, string>)[name];
  app.get('/vehicle/:vin', { preHandler: requirePermission('vehicle-service', 'READ', 'VIN', param('vin')) }, reply as never);
  app.put('/vehicle/:vin', { preHandler: requirePermission('vehicle-service', 'WRITE', 'VIN', param('vin')) }, reply as never);
  app.get('/async/:vin', { preHandler: requirePermission('vehicle-service', 'READ', 'VIN', (req) => later(param('vin')(req))) }, reply as never);
  app.get('/throws/:vin', { preHandler: requirePermission('vehicle-service', 'READ', 'VIN', boom) }, reply as never);
  app.get('/node/:id', { preHandler: requirePermission('vehicle-service', 'READ', { node: param('id') }) }, reply as never);
  app.get('/multi', { preHandler: requirePermission('vehicle-service', 'READ', 'VIN', () => ['WVW1', 'WVW2']) }, reply as never);
  app.get('/empty', { preHandler: requirePermission('vehicle-service', 'READ', 'VIN', () => undefined) }, reply as never);
  app.get('/me', { onRequest: authenticate() }, reply as never);
  app.get('/optional', { onRequest: authenticate({ optional: true }) }, reply as never);
  app.get('/any/:vin', { preHandler: requireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', param('vin')) }, reply as never);
  app.get('/anymulti', { preHandler: requireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', () => ['WVW1', 'WVW2']) }, reply as never);
  app.get('/shadow/:vin', { preHandler: requirePermission('vehicle-service', 'WRITE', 'VIN', param('vin'), { mode: 'report' }) }, reply as never);
  app.get('/enforced/:vin', { preHandler: requirePermission('vehicle-service', 'WRITE', 'VIN', param('vin'), { mode: 'enforce' }) }, reply as never);
  app.options('/me', { onRequest: authenticate() }, async (_req, res) => { handled.count++; return res.code(204).send(); });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, handled, close: () => app.close() };
}
