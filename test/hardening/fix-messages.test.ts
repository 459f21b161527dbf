/**
 * Misuse messages that name the fix, in one sentence, without echoing what they were given when
 * it may be a token: a token string passed to `authorize`, a `baseUrl` without a scheme, the
 * Fastify plugin given `createAuthorizer`'s options.
 */
import Fastify from 'fastify';
import { afterAll, expect, test } from 'vitest';
import { iamAuthz } from '../../adapters/fastify/index.js';
import { Authorizers, STATIC_KEY } from '../helpers/index.js';

const authorizers = new Authorizers();
afterAll(async () => { await authorizers.closeAll(); });
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXBhcnQ';
const QUERY = { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } };

test('authorize given a token string: a TypeError saying to pass what authenticate() returned, without the string', async () => {
  const authz = authorizers.create({ baseUrl: 'https://iam.example.test', localJwks: { keys: [STATIC_KEY.jwk] } });
  const error = await authz.authorize(TOKEN as never, QUERY).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(TypeError);
  expect((error as Error).message).toBe('authorize: pass the identity that authenticate() returned, not a token string');
  for (const [name, call] of [
    ['authorizeMany', () => authz.authorizeMany(TOKEN as never, [QUERY])],
    ['accessible', () => authz.accessible(TOKEN as never, { service: 'vehicle-service', permission: 'READ', type: 'VIN' })],
    ['permissionsFor', () => authz.permissionsFor(TOKEN as never, { service: 'vehicle-service', resource: QUERY.resource })],
  ] as const) {
    await expect(call()).rejects.toThrow(`${name}: pass the identity that authenticate() returned, not a token string`);
  }
  await expect(authz.authorize(undefined as never, QUERY)).rejects.toThrow(/^authorize: pass the identity that authenticate\(\) returned$/);
  await expect(authz.authorize({ token: TOKEN } as never, QUERY)).rejects.toThrow(TypeError);
});

test('"baseUrl" without a scheme: the message says to add https://, with the value given', () => {
  const create = (baseUrl: string) => () => authorizers.create({ baseUrl });
  expect(create('iam.example.com')).toThrow('createAuthorizer: "baseUrl" must be an http(s) URL: add the scheme, e.g. https://iam.example.com');
  expect(create('localhost:4000')).toThrow('add the scheme, e.g. https://localhost:4000');
  expect(create('not a url at all')).toThrow('add the scheme, e.g. https://iam.example.com');
  expect(create('ftp://iam.example.com')).toThrow('createAuthorizer: "baseUrl" must be an http(s) URL');
});

test('the Fastify plugin given createAuthorizer\'s options: the message names the "authorizer" option and createAuthorizer', async () => {
  const app = Fastify();
  app.register(iamAuthz, { baseUrl: 'https://iam.example.com' } as never);
  await expect(app.ready()).rejects.toThrow(/pass the "authorizer" option, an Authorizer made with createAuthorizer\(.*not createAuthorizer's own options \(got "baseUrl"\)/);
  await app.close().catch(() => undefined);
});
