/** Options: defaults, derivations, and a TypeError naming the option for every bad value or unknown name. */
import { Agent, type Dispatcher } from 'undici';
import { describe, expect, test } from 'vitest';
import { createAuthorizer, type AuthorizerOptions } from '../../src/index.js';
import { KEY, NOW_MS } from '../helpers/index.js';
import { BASE, expectAccepted, expectRefused, token, useLoopbackJwks } from '../token/support.js';

const { authorizers, iam } = useLoopbackJwks();

const STATIC = { keys: [KEY.jwk] };

/** Asserts createAuthorizer throws a TypeError whose message names `name`. */
function expectOptionError(options: unknown, name: string): void {
  let error: unknown;
  try {
    const authz = createAuthorizer(options as AuthorizerOptions);
    void authz.close();
  } catch (e) {
    error = e;
  }
  expect(error, `createAuthorizer should throw for a bad "${name}"`).toBeInstanceOf(TypeError);
  expect((error as Error).message).toContain(name);
}

describe('bad values are a TypeError naming the option', () => {
  test.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'https://iam.example.test'],
  ])('options that are %s', (_label, options) => {
    expect(() => createAuthorizer(options as AuthorizerOptions)).toThrow(TypeError);
  });

  test('neither baseUrl nor issuer', () => {
    expectOptionError({ localJwks: STATIC }, 'baseUrl');
    expectOptionError({ localJwks: STATIC }, 'issuer');
  });

  test.each<[string, Record<string, unknown>, string]>([
    ['baseUrl not a URL', { baseUrl: 'not a url' }, 'baseUrl'],
    ['baseUrl a number', { baseUrl: 42 }, 'baseUrl'],
    ['baseUrl with ftp', { baseUrl: 'ftp://iam.example.test' }, 'baseUrl'],
    ['baseUrl with credentials', { baseUrl: 'https://user:pw@iam.example.test' }, 'baseUrl'],
    ['issuer empty', { issuer: '', localJwks: STATIC }, 'issuer'],
    ['issuer a number', { issuer: 5, localJwks: STATIC }, 'issuer'],
    ['jwksUri not a URL', { baseUrl: BASE, jwksUri: 'jwks.json' }, 'jwksUri'],
    ['jwksUri file:', { baseUrl: BASE, jwksUri: 'file:///etc/passwd' }, 'jwksUri'],
    ['jwks null', { baseUrl: BASE, jwks: null }, 'jwks'],
    ['jwks a string', { baseUrl: BASE, jwks: '{"keys":[]}' }, 'jwks'],
    ['jwks.keys not an array', { baseUrl: BASE, jwks: { keys: 'k' } }, 'jwks.keys'],
    ['localJwks.keys holding a non-object', { baseUrl: BASE, localJwks: { keys: [KEY.jwk, 'k'] } }, 'localJwks'],
    ['jwks.ttlMs negative', { baseUrl: BASE, jwks: { ttlMs: -1 } }, 'jwks.ttlMs'],
    ['jwks.ttlMs a string', { baseUrl: BASE, jwks: { ttlMs: '600000' } }, 'jwks.ttlMs'],
    ['jwks.minRefreshIntervalMs NaN', { baseUrl: BASE, jwks: { minRefreshIntervalMs: Number.NaN } }, 'jwks.minRefreshIntervalMs'],
    ['jwks.timeoutMs zero', { baseUrl: BASE, jwks: { timeoutMs: 0 } }, 'jwks.timeoutMs'],
    ['jwks.timeoutMs a fraction', { baseUrl: BASE, jwks: { timeoutMs: 1.5 } }, 'jwks.timeoutMs'],
    ['jwks.maxStaleMs Infinity', { baseUrl: BASE, jwks: { maxStaleMs: Infinity } }, 'jwks.maxStaleMs'],
    ['jwks.maxBytes zero', { baseUrl: BASE, jwks: { maxBytes: 0 } }, 'jwks.maxBytes'],
    ['audience empty string', { baseUrl: BASE, localJwks: STATIC, audience: '' }, 'audience'],
    ['audience empty array', { baseUrl: BASE, localJwks: STATIC, audience: [] }, 'audience'],
    ['audience with a number', { baseUrl: BASE, localJwks: STATIC, audience: ['tenant-1', 2] }, 'audience'],
    ['audience a Set', { baseUrl: BASE, localJwks: STATIC, audience: new Set(['tenant-1']) }, 'audience'],
    ['algorithms empty', { baseUrl: BASE, localJwks: STATIC, algorithms: [] }, 'algorithms'],
    ['algorithms a string', { baseUrl: BASE, localJwks: STATIC, algorithms: 'RS256' }, 'algorithms'],
    ['algorithms with none', { baseUrl: BASE, localJwks: STATIC, algorithms: ['RS256', 'none'] }, 'none'],
    ['algorithms with HS256', { baseUrl: BASE, localJwks: STATIC, algorithms: ['HS256'] }, 'HS256'],
    ['algorithms with ES256', { baseUrl: BASE, localJwks: STATIC, algorithms: ['ES256'] }, 'ES256'],
    ['algorithms with lower-case rs256', { baseUrl: BASE, localJwks: STATIC, algorithms: ['rs256'] }, 'rs256'],
    ['algorithms with an inherited name', { baseUrl: BASE, localJwks: STATIC, algorithms: ['toString'] }, 'toString'],
    ['tokenFormats empty', { baseUrl: BASE, localJwks: STATIC, tokenFormats: [] }, 'tokenFormats'],
    ['tokenFormats a string', { baseUrl: BASE, localJwks: STATIC, tokenFormats: 't1' }, 'tokenFormats'],
    ['tokenFormats with an empty string', { baseUrl: BASE, localJwks: STATIC, tokenFormats: [''] }, 'tokenFormats'],
    ['clockToleranceSec negative', { baseUrl: BASE, localJwks: STATIC, clockToleranceSec: -1 }, 'clockToleranceSec'],
    ['clockToleranceSec NaN', { baseUrl: BASE, localJwks: STATIC, clockToleranceSec: Number.NaN }, 'clockToleranceSec'],
    ['clockToleranceSec Infinity', { baseUrl: BASE, localJwks: STATIC, clockToleranceSec: Infinity }, 'clockToleranceSec'],
    ['clockToleranceSec a string', { baseUrl: BASE, localJwks: STATIC, clockToleranceSec: '5' }, 'clockToleranceSec'],
    ['clockToleranceSec over 300', { baseUrl: BASE, localJwks: STATIC, clockToleranceSec: 301 }, 'clockToleranceSec'],
    ['maxTokenBytes zero', { baseUrl: BASE, localJwks: STATIC, maxTokenBytes: 0 }, 'maxTokenBytes'],
    ['maxTokenBytes a string', { baseUrl: BASE, localJwks: STATIC, maxTokenBytes: '8192' }, 'maxTokenBytes'],
    ['maxTokenBytes a fraction', { baseUrl: BASE, localJwks: STATIC, maxTokenBytes: 100.5 }, 'maxTokenBytes'],
    ['tokenCache true', { baseUrl: BASE, localJwks: STATIC, tokenCache: true }, 'tokenCache'],
    ['tokenCache null', { baseUrl: BASE, localJwks: STATIC, tokenCache: null }, 'tokenCache'],
    ['tokenCache.max zero', { baseUrl: BASE, localJwks: STATIC, tokenCache: { max: 0 } }, 'tokenCache.max'],
    ['tokenCache.maxTtlMs negative', { baseUrl: BASE, localJwks: STATIC, tokenCache: { maxTtlMs: -1 } }, 'tokenCache.maxTtlMs'],
    ['dispatcher a plain object', { baseUrl: BASE, dispatcher: {} }, 'dispatcher'],
    ['dispatcher a string', { baseUrl: BASE, dispatcher: 'http://proxy' }, 'dispatcher'],
    ['now a number', { baseUrl: BASE, localJwks: STATIC, now: NOW_MS }, 'now'],
  ])('%s', (_label, options, name) => {
    expectOptionError(options, name);
  });

  test.each(['audiences', 'clockTolerance', 'jwksUrl', 'algorithm', 'cache', 'issuerUrl', 'fetch'])('unknown option "%s" is a TypeError naming it', (name) => {
    expectOptionError({ baseUrl: BASE, localJwks: STATIC, [name]: 'x' }, name);
  });

  // Members of the nested `jwks` and `tokenCache` objects are checked against their known names, so a
  // typo is not silently ignored (the default would be used instead).
  test.each<[string, Record<string, unknown>, string]>([
    ['jwks.cacheMaxAge (typo of ttlMs)', { baseUrl: BASE, jwks: { cacheMaxAge: 60_000 } }, 'cacheMaxAge'],
    ['jwks.timeout (typo of timeoutMs)', { baseUrl: BASE, jwks: { timeout: 1_000 } }, 'timeout'],
    ['tokenCache.maxTTL (typo of maxTtlMs)', { baseUrl: BASE, localJwks: STATIC, tokenCache: { maxTTL: 1 } }, 'maxTTL'],
    ['a JWK Set in jwks (localJwks is its one spelling)', { baseUrl: BASE, jwks: { keys: [KEY.jwk], minRefreshIntervalMs: 10 } }, 'jwks.keys'],
  ])('unknown nested option %s is a TypeError naming it', (_label, options, name) => {
    expectOptionError(options, name);
  });
});

describe('defaults and derivations', () => {
  test('issuer defaults to `${baseUrl}/authentication/v1`; a trailing slash on baseUrl is ignored', async () => {
    await expectAccepted(authorizers.static({ baseUrl: `${BASE}/` }), token());
    await expectAccepted(authorizers.static({ baseUrl: `${BASE}//` }), token());
    await expectRefused(authorizers.static({ baseUrl: `${BASE}/` }), token({ iss: `${BASE}//authentication/v1` }), 'ERR_TOKEN_INVALID');
  });

  test('jwksUri defaults to `${issuer}/.well-known/jwks.json`', async () => {
    const authz = iam.authorizer();
    await expectAccepted(authz, iam.token());
    expect(iam.requests.map((r) => r.url)).toEqual(['/authentication/v1/.well-known/jwks.json']);
  });

  test('issuer alone: jwksUri is derived from it, and baseUrl is not needed', async () => {
    const issuer = `${iam.url}/tenants/iam`;
    const authz = iam.authorizer({ issuer });
    await expectAccepted(authz, iam.token({ iss: issuer }));
    expect(iam.requests.map((r) => r.url)).toEqual(['/tenants/iam/.well-known/jwks.json']);
  });

  test('jwksUri alone overrides the derived one', async () => {
    const authz = iam.authorizer({ baseUrl: BASE, jwksUri: `${iam.url}/keys?v=1` });
    await expectAccepted(authz, token());
    expect(iam.requests.map((r) => r.url)).toEqual(['/keys?v=1']);
  });

  test('a static jwks uses no network at all', async () => {
    const authz = iam.authorizer({ localJwks: STATIC });
    await authz.ready();
    await expectAccepted(authz, iam.token());
    await expectRefused(authz, iam.token({}, { kid: 'unknown' }), 'ERR_TOKEN_INVALID');
    expect(iam.requests).toHaveLength(0);
  });

  test('the now option is the clock for exp checks', async () => {
    const t = token({ exp: 2_000_000_000 });
    await expectAccepted(authorizers.static({ now: () => 1_999_999_000_000 }), t);
    await expectRefused(authorizers.static({ now: () => 2_000_001_000_000 }), t, 'ERR_TOKEN_EXPIRED');
  });

  test('a dispatcher given in the options carries the JWKS request and is not closed by close()', async () => {
    let dispatched = 0;
    class CountingAgent extends Agent {
      override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
        dispatched++;
        return super.dispatch(options, handler);
      }
    }
    const agent = new CountingAgent();
    try {
      const authz = iam.authorizer({ dispatcher: agent });
      await expectAccepted(authz, iam.token());
      expect(dispatched).toBe(1);
      await authz.close();
      expect(agent.closed).toBe(false);
    } finally {
      await agent.close();
    }
  });

  test('default algorithms are RS256 only: RS256 passes, RS384 (same key, no alg on the JWK) does not', async () => {
    const { alg: _alg, ...noAlg } = KEY.jwk;
    const authz = authorizers.static({ localJwks: { keys: [noAlg] } });
    await expectAccepted(authz, token());
    await expectRefused(authz, token({}, { alg: 'RS384' }), 'ERR_TOKEN_INVALID');
  });

});
