/**
 * Misuse fails loudly, never crashes (issue #9 §6): unknown adapter options are a TypeError naming
 * them; the Fastify plugin registered without an authorizer, with a bad option, or twice makes
 * register()/ready() reject — no uncaught exception; `passErrors` hands the IamAuthzError, its
 * headers already attached by the guard, to each framework's own error handling.
 */
import Fastify from 'fastify';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer, IamAuthzError, type Authorizer } from '../../src/index.js';
import { expressAuthz } from '../../adapters/express/index.js';
import { koaAuthz } from '../../adapters/koa/index.js';
import { fastifyAuthz, iamAuthz } from '../../adapters/fastify/index.js';
import { useIam } from '../helpers/index.js';

const iam = useIam();
let authorizer: Authorizer;
let alice: string;

beforeAll(() => {
  authorizer = iam.authorizer();
  alice = iam.token();
});

describe('adapter options are validated like createAuthorizer\'s', () => {
  test.each([
    ['expressAuthz', (o: object) => expressAuthz(authorizer, o as never)],
    ['koaAuthz', (o: object) => koaAuthz(authorizer, o as never)],
    ['fastifyAuthz', (o: object) => fastifyAuthz(authorizer, o as never)],
  ])('%s: an unknown option is a TypeError naming it; so is a wrong type', (name, make) => {
    expect(() => make({ relm: 'x' })).toThrow(new TypeError(`${name}: unknown option "relm"`));
    expect(() => make({ passErrors: 'yes' })).toThrow(/"passErrors" must be a boolean/);
    expect(() => make({ exposeDecision: 1 })).toThrow(/"exposeDecision" must be a boolean/);
    expect(() => make({ realm: '' })).toThrow(/realm/);
    expect(() => make({ onError: undefined, passErrors: true, realm: 'r', exposeDecision: false, retryAfterSec: 1 })).not.toThrow();
  });

  test('createAuthorizer: dispatcher null is a TypeError naming the option', () => {
    expect(() => createAuthorizer({ baseUrl: 'http://127.0.0.1:1', dispatcher: null as never })).toThrow(/"dispatcher"/);
  });
});

describe('the Fastify plugin rejects instead of crashing', () => {
  const crashes: unknown[] = [];
  const onCrash = (error: unknown) => { crashes.push(error); };
  beforeAll(() => { process.on('uncaughtException', onCrash); });
  afterAll(() => { process.off('uncaughtException', onCrash); });

  test.each([
    ['without an authorizer', () => ({})],
    ['with an invalid option', () => ({ authorizer: { ...authorizer, close: async () => {} }, realm: '' })],
    ['with an unknown option', () => ({ authorizer: { ...authorizer, close: async () => {} }, relm: 'x' })],
  ])('%s: ready() rejects with the TypeError', async (_name, options) => {
    const app = Fastify();
    app.register(iamAuthz, options() as never);
    await expect(app.ready()).rejects.toThrow(TypeError);
    await app.close().catch(() => undefined);
    expect(crashes).toStrictEqual([]);
  });

  test('registered twice: ready() rejects, nothing crashes', async () => {
    const app = Fastify();
    const throwaway = { ...authorizer, close: async () => {} };
    app.register(iamAuthz, { authorizer: throwaway });
    app.register(iamAuthz, { authorizer: throwaway });
    await expect(app.ready()).rejects.toThrow(/already registered/);
    await app.close().catch(() => undefined);
    expect(crashes).toStrictEqual([]);
  });

  test('Fastify\'s own register options (prefix) are accepted', async () => {
    const app = Fastify();
    await app.register(iamAuthz, { authorizer: { ...authorizer, close: async () => {} }, prefix: '/api' } as never);
    await app.ready();
    expect(app.hasDecorator('iamAuthz')).toBe(true);
    await app.close();
  });
});

describe('passErrors hands the error to the framework, headers attached', () => {
  test('koa: thrown to upstream middleware with status, statusCode and WWW-Authenticate', async () => {
    const app = new Koa();
    const seen: IamAuthzError[] = [];
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (error) {
        seen.push(error as IamAuthzError);
        const e = error as IamAuthzError;
        ctx.status = e.status;
        ctx.set(e.headers);
        ctx.body = { custom: e.code };
      }
    });
    app.use(koaAuthz(authorizer, { passErrors: true }).requirePermission('vehicle-service', 'WRITE', 'VIN', () => 'WVW1'));
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const denied = await fetch(url, { headers: { authorization: `Bearer ${alice}` } });
      expect(denied.status).toBe(403);
      expect(denied.headers.get('www-authenticate')).toContain('insufficient_scope');
      expect(await denied.json()).toStrictEqual({ custom: 'ERR_PERMISSION_DENIED' });
      const missing = await fetch(url);
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="iam"');
      expect(seen.map((e) => [e.code, e.statusCode])).toStrictEqual([['ERR_PERMISSION_DENIED', 403], ['ERR_TOKEN_MISSING', 401]]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('fastify: reaches setErrorHandler with statusCode and headers; the default handler answers with them', async () => {
    for (const custom of [true, false]) {
      const app = Fastify();
      if (custom) {
        app.setErrorHandler(async (error: IamAuthzError, _request, reply) => reply.code(error.statusCode).headers(error.headers).send({ custom: error.code }));
      }
      const { requirePermission } = fastifyAuthz(authorizer, { passErrors: true });
      app.get('/', { preHandler: requirePermission('vehicle-service', 'WRITE', 'VIN', () => 'WVW1') }, async () => 'ok');
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      try {
        const res = await fetch(url, { headers: { authorization: `Bearer ${alice}` } });
        expect(res.status).toBe(403);
        expect(res.headers.get('www-authenticate')).toContain('insufficient_scope');
        const body = await res.json() as Record<string, unknown>;
        if (custom) expect(body).toStrictEqual({ custom: 'ERR_PERMISSION_DENIED' });
        else expect(body.code).toBe('ERR_PERMISSION_DENIED');
      } finally {
        await app.close();
      }
    }
  });
});
