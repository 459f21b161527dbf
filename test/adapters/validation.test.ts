/**
 * Options are checked where they are written: every adapter factory, every guard factory and
 * `createGuards` throw a `TypeError` naming the offending option or argument when they are called
 * (never on the first request); `null` is never "default", only `undefined` is.
 */
import Fastify from 'fastify';
import { afterAll, describe, expect, test } from 'vitest';
import type { Authorizer } from '../../src/index.js';
import { createGuards } from '../../src/adapter/index.js';
import { expressAuthz } from '../../adapters/express/index.js';
import { koaAuthz } from '../../adapters/koa/index.js';
import { fastifyAuthz, iamAuthz } from '../../adapters/fastify/index.js';
import { honoAuthz } from '../../adapters/hono/index.js';
import { createFetchGuards } from '../../adapters/fetch/index.js';
import { Authorizers } from '../helpers/index.js';

const authorizers = new Authorizers();
afterAll(() => authorizers.closeAll());
// Never used to verify anything here: every check below throws before a request exists.
const authorizer: Authorizer = authorizers.create({ baseUrl: 'http://127.0.0.1:1' });

type Make = (authorizer: unknown, options?: unknown) => {
  authenticate: (...args: unknown[]) => unknown;
  requirePermission: (...args: unknown[]) => unknown;
  requireAnyPermission: (...args: unknown[]) => unknown;
};

const FACTORIES: [name: string, make: Make, hasOnError: boolean][] = [
  ['expressAuthz', expressAuthz as unknown as Make, true],
  ['koaAuthz', koaAuthz as unknown as Make, true],
  ['fastifyAuthz', fastifyAuthz as unknown as Make, true],
  ['honoAuthz', honoAuthz as unknown as Make, true],
  ['createFetchGuards', createFetchGuards as unknown as Make, true],
  ['createGuards', ((a: Authorizer, o?: object) => createGuards(a, o)) as unknown as Make, false],
];

/** `fn` throws a TypeError whose message matches every one of `parts`. */
function throwsNaming(fn: () => unknown, ...parts: (string | RegExp)[]): void {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected a TypeError naming ${parts.join(', ')}`).toBeInstanceOf(TypeError);
  for (const part of parts) expect((thrown as TypeError).message).toMatch(part);
}

describe.each(FACTORIES)('%s', (name, make, hasOnError) => {
  const options = ['realm', 'exposeDecision', 'retryAfterSec', 'passErrors', 'mode', ...(hasOnError ? ['onError'] : [])];

  test('the authorizer: missing, or createAuthorizer\'s options instead, names createAuthorizer', () => {
    throwsNaming(() => make(undefined), name, /createAuthorizer/);
    throwsNaming(() => make(null), name, /createAuthorizer/);
    throwsNaming(() => make({ baseUrl: 'http://127.0.0.1:1' }), name, /createAuthorizer/, /baseUrl/);
  });

  test('adapter options: not an object, unknown, or a wrong value is a TypeError naming it', () => {
    throwsNaming(() => make(authorizer, null), name, /options/, /null/);
    throwsNaming(() => make(authorizer, 'report'), name, /options/);
    throwsNaming(() => make(authorizer, { mod: 'report' }), name, '"mod"');
    throwsNaming(() => make(authorizer, { mode: 'enforc' }), name, '"mode"');
    throwsNaming(() => make(authorizer, { realm: 'a\nb' }), name, '"realm"');
    throwsNaming(() => make(authorizer, { retryAfterSec: -1 }), name, '"retryAfterSec"');
    throwsNaming(() => make(authorizer, { retryAfterSec: 1.5 }), name, '"retryAfterSec"');
    throwsNaming(() => make(authorizer, { passErrors: 'yes' }), name, '"passErrors"');
    throwsNaming(() => make(authorizer, { exposeDecision: 1 }), name, '"exposeDecision"');
    if (hasOnError) throwsNaming(() => make(authorizer, { onError: 'log' }), name, '"onError"');
    else throwsNaming(() => make(authorizer, { onError: () => undefined }), name, '"onError"');
  });

  test.each(['realm', 'exposeDecision', 'retryAfterSec', 'passErrors', 'mode', 'onError'])('adapter option %s: null is a TypeError naming it', (key) => {
    if (!options.includes(key)) return;
    throwsNaming(() => make(authorizer, { [key]: null }), name, `"${key}"`, /null/);
  });

  test('adapter options: undefined means the default', () => {
    const all = Object.fromEntries(options.map((key) => [key, undefined]));
    expect(() => make(authorizer, all)).not.toThrow();
    expect(() => make(authorizer, undefined)).not.toThrow();
  });

  test('authenticate(): its options are checked when it is called', () => {
    const { authenticate } = make(authorizer);
    throwsNaming(() => authenticate(null), 'authenticate', /options/, /null/);
    throwsNaming(() => authenticate(true), 'authenticate', /options/);
    throwsNaming(() => authenticate({ optional: null }), 'authenticate', '"optional"', /null/);
    throwsNaming(() => authenticate({ optional: 'yes' }), 'authenticate', '"optional"');
    throwsNaming(() => authenticate({ optinal: true }), 'authenticate', '"optinal"');
    expect(() => authenticate({ optional: undefined })).not.toThrow();
    expect(() => authenticate({ optional: true })).not.toThrow();
    expect(() => authenticate()).not.toThrow();
  });

  test('requirePermission(): every argument is checked when it is called', () => {
    const { requirePermission } = make(authorizer);
    const vin = () => 'WVW1';
    throwsNaming(() => requirePermission('', 'READ', 'VIN', vin), 'requirePermission', '"service"');
    throwsNaming(() => requirePermission(null, 'READ', 'VIN', vin), 'requirePermission', '"service"');
    throwsNaming(() => requirePermission('svc', '', 'VIN', vin), 'requirePermission', '"permission"');
    throwsNaming(() => requirePermission('svc', null, 'VIN', vin), 'requirePermission', '"permission"');
    throwsNaming(() => requirePermission('svc', ['READ'], 'VIN', vin), 'requirePermission', '"permission"');
    throwsNaming(() => requirePermission('svc', 'READ', '', vin), 'requirePermission', /resource type/);
    throwsNaming(() => requirePermission('svc', 'READ', 'VIN=X', vin), 'requirePermission', /resource type/);
    throwsNaming(() => requirePermission('svc', 'READ', null, vin), 'requirePermission', /resource type/);
    throwsNaming(() => requirePermission('svc', 'READ', 'VIN'), 'requirePermission', /resolver/);
    throwsNaming(() => requirePermission('svc', 'READ', 'VIN', 'WVW1'), 'requirePermission', /resolver/);
    throwsNaming(() => requirePermission('svc', 'READ', 'VIN', null), 'requirePermission', /resolver/);
    throwsNaming(() => requirePermission('svc', 'READ', { node: 'n-1' }), 'requirePermission', /resolver/);
    throwsNaming(() => requirePermission('svc', 'READ', { node: null }), 'requirePermission', /resolver/);
    throwsNaming(() => requirePermission('svc', 'READ', { nod: vin }), 'requirePermission', '"nod"');
    throwsNaming(() => requirePermission('svc', 'READ', [vin]), 'requirePermission', /resource type/);
  });

  test('requireAnyPermission(): every argument is checked when it is called', () => {
    const { requireAnyPermission } = make(authorizer);
    const vin = () => 'WVW1';
    throwsNaming(() => requireAnyPermission('', ['READ'], 'VIN', vin), 'requireAnyPermission', '"service"');
    throwsNaming(() => requireAnyPermission('svc', [], 'VIN', vin), 'requireAnyPermission', '"permissions"');
    throwsNaming(() => requireAnyPermission('svc', 'READ', 'VIN', vin), 'requireAnyPermission', '"permissions"');
    throwsNaming(() => requireAnyPermission('svc', null, 'VIN', vin), 'requireAnyPermission', '"permissions"');
    throwsNaming(() => requireAnyPermission('svc', ['READ', null], 'VIN', vin), 'requireAnyPermission', '"permissions"');
    throwsNaming(() => requireAnyPermission('svc', ['READ'], 'VIN=X', vin), 'requireAnyPermission', /resource type/);
    throwsNaming(() => requireAnyPermission('svc', ['READ'], 'VIN', () => 'WVW1', { mod: 'report' }), 'requireAnyPermission', '"mod"');
    throwsNaming(() => requireAnyPermission('svc', ['READ'], 'VIN', 42), 'requireAnyPermission', /resolver/);
    throwsNaming(() => requireAnyPermission('svc', ['READ'], { node: 42 }), 'requireAnyPermission', /resolver/);
  });

  test.each(['requirePermission', 'requireAnyPermission'] as const)('%s(): route options are checked when it is called', (guard) => {
    const factory = make(authorizer);
    const make5 = (options: unknown) => guard === 'requirePermission'
      ? factory.requirePermission('svc', 'READ', 'VIN', () => 'WVW1', options)
      : factory.requireAnyPermission('svc', ['READ'], 'VIN', () => 'WVW1', options);
    const byNode = (options: unknown) => guard === 'requirePermission'
      ? factory.requirePermission('svc', 'READ', { node: () => 'n-1' }, options)
      : factory.requireAnyPermission('svc', ['READ'], { node: () => 'n-1' }, options);
    for (const route of [make5, byNode]) {
      throwsNaming(() => route({ mod: 'report' }), guard, '"mod"');
      throwsNaming(() => route({ mode: 'enforc' }), guard, '"mode"', /enforce/);
      throwsNaming(() => route({ mode: null }), guard, '"mode"', /null/);
      throwsNaming(() => route(null), guard, /route options/, /null/);
      throwsNaming(() => route('report'), guard, /route options/);
      expect(() => route({ mode: 'report' })).not.toThrow();
      expect(() => route({ mode: undefined })).not.toThrow();
      expect(() => route(undefined)).not.toThrow();
    }
  });
});

describe('the Fastify plugin', () => {
  test('createAuthorizer\'s options instead of an authorizer: one sentence names "authorizer" and createAuthorizer', async () => {
    const app = Fastify();
    app.register(iamAuthz, { baseUrl: 'http://127.0.0.1:1' } as never);
    const error = await app.ready().then(() => undefined, (e: unknown) => e);
    await app.close().catch(() => undefined);
    expect(error).toBeInstanceOf(TypeError);
    const message = (error as TypeError).message;
    expect(message).toMatch(/^iamAuthz: /);
    expect(message).toMatch(/"authorizer"/);
    expect(message).toMatch(/createAuthorizer\(/);
    expect(message).toMatch(/baseUrl/);
    // One sentence: a single full stop, at the end if at all.
    expect(message.replace(/\.$/, '').replace(/createAuthorizer\(\{[^}]*\}\)/g, '')).not.toMatch(/\. /);
  });

  test('without options or with null options: the same advice', async () => {
    for (const options of [{}, null]) {
      const app = Fastify();
      app.register(iamAuthz, options as never);
      const error = await app.ready().then(() => undefined, (e: unknown) => e);
      await app.close().catch(() => undefined);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as TypeError).message).toMatch(/^iamAuthz: .*"authorizer".*createAuthorizer/);
    }
  });

  test('its own options are named under iamAuthz, null included', async () => {
    const throwaway = { ...authorizer, close: async () => {} };
    for (const [options, key] of [[{ mode: 'enforc' }, '"mode"'], [{ realm: null }, '"realm"'], [{ mod: 'report' }, '"mod"'], [{ onError: null }, '"onError"']] as const) {
      const app = Fastify();
      app.register(iamAuthz, { authorizer: throwaway, ...options } as never);
      const error = await app.ready().then(() => undefined, (e: unknown) => e);
      await app.close().catch(() => undefined);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as TypeError).message).toMatch(/^iamAuthz: /);
      expect((error as TypeError).message).toContain(key);
    }
  });
});
