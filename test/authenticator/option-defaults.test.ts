/**
 * Option defaults adapt to what the user set (issue #9 §6): staleness counts from the end of
 * freshness (RFC 5861 stale-if-error), so any pair of values is valid; a setting that silently
 * does nothing warns once; the local JWK Set has one spelling, `localJwks`: a JWK Set in `jwks` is an
 * unknown option `jwks.keys`, with a hint.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createAuthorizer, type Authorizer } from '../../src/index.js';
import { KEY, mint, NOW_MS } from '../helpers/index.js';
import { BASE } from '../token/support.js';

const made: Authorizer[] = [];
let warnings: Error[] = [];
const onWarning = (w: Error) => { warnings.push(w); };
beforeEach(() => {
  warnings = [];
  process.on('warning', onWarning);
});
afterEach(async () => {
  process.off('warning', onWarning);
  for (const a of made.splice(0)) await a.close();
});
const create = (options: Parameters<typeof createAuthorizer>[0]) => {
  const a = createAuthorizer(options);
  made.push(a);
  return a;
};
/** process.emitWarning delivers on the next tick. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('defaults adapt', () => {
  test('policy.ttlMs above the default maxStaleMs alone, and jwks.ttlMs above 1 h alone, are valid', () => {
    expect(() => create({ baseUrl: BASE, policy: { ttlMs: 600_000 } })).not.toThrow();
    expect(() => create({ baseUrl: BASE, jwks: { ttlMs: 7_200_000 } })).not.toThrow();
    expect(() => create({ baseUrl: BASE, policy: { ttlMs: 600_000, maxStaleMs: 0 }, jwks: { ttlMs: 10_000, maxStaleMs: 0 } })).not.toThrow();
  });

  test('a setting that does nothing warns once per process, with a code', async () => {
    create({ baseUrl: BASE, policy: { ttlMs: 1_000, minRefreshIntervalMs: 5_000 } });
    create({ baseUrl: BASE, policy: { ttlMs: 2_000, minRefreshIntervalMs: 5_000 } });
    create({ baseUrl: BASE, jwks: { ttlMs: 1_000, minRefreshIntervalMs: 5_000 } });
    await flush();
    const codes = warnings.map((w) => (w as Error & { code?: string }).code);
    expect(codes.filter((c) => c === 'IAM_AUTHZ_POLICY_TTL_BELOW_MIN_REFRESH')).toHaveLength(1);
    expect(codes.filter((c) => c === 'IAM_AUTHZ_JWKS_TTL_BELOW_MIN_REFRESH')).toHaveLength(1);
    expect(warnings.find((w) => (w as { code?: string }).code === 'IAM_AUTHZ_POLICY_TTL_BELOW_MIN_REFRESH')?.message).toMatch(/"policy.ttlMs" \(1000 ms\) is shorter than "policy.minRefreshIntervalMs"/);
  });
});

describe('the local JWK Set', () => {
  test('localJwks verifies with no network, and warns nothing', async () => {
    const local = create({ baseUrl: BASE, localJwks: { keys: [KEY.jwk] }, now: () => NOW_MS });
    expect((await local.authenticate(`Bearer ${mint(BASE)}`)).claims.sub).toBe('actor-alice');
    await flush();
    expect(warnings).toStrictEqual([]);
  });

  test('a JWK Set in "jwks" is the unknown option "jwks.keys", with a hint to use localJwks', async () => {
    for (const jwks of [{ keys: [KEY.jwk] }, { keys: [KEY.jwk], minRefreshIntervalMs: 10 }, { keys: 'k' }]) {
      expect(() => create({ baseUrl: BASE, jwks: jwks, now: () => NOW_MS })).toThrow(TypeError);
      expect(() => create({ baseUrl: BASE, jwks: jwks, now: () => NOW_MS })).toThrow(/^createAuthorizer: unknown option "jwks\.keys".*"localJwks"/);
    }
    await flush();
    expect(warnings.filter((w) => w.name === 'DeprecationWarning')).toStrictEqual([]);
  });

  test('a JWK Set in both options, or a local set with jwksUri, is a TypeError', () => {
    expect(() => createAuthorizer({ baseUrl: BASE, localJwks: { keys: [KEY.jwk] }, jwks: { keys: [KEY.jwk] } as never })).toThrow(/"jwks\.keys"/);
    expect(() => createAuthorizer({ baseUrl: BASE, localJwks: { keys: [KEY.jwk] }, jwksUri: `${BASE}/k` })).toThrow(/not both/);
    expect(() => createAuthorizer({ baseUrl: BASE, localJwks: { keys: [] } })).toThrow(/"localJwks" is a JWK Set without keys/);
    expect(() => createAuthorizer({ baseUrl: BASE, localJwks: 'x' as never })).toThrow(/"localJwks" must be a JWK Set/);
  });
});
