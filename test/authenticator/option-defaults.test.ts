/**
 * Option defaults adapt to what the user set: an unset minRefreshIntervalMs follows ttlMs, staleness counts from the end of
 * freshness (RFC 5861 stale-if-error), so any pair of values is valid; a setting that silently
 * does nothing warns once; the local JWK Set has one spelling, `localJwks`: a JWK Set in `jwks` is an
 * unknown option `jwks.keys`, with a hint.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createAuthorizer, type Authorizer } from '../../src/index.js';
import { resolveJwksOptions } from '../../src/jwks/options.js';
import { resolvePolicyOptions } from '../../src/policy/options.js';
import { authorizerChecks as checks } from '../../src/lib/option-checks.js';
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

// The floor's warning first: the others below emit it too, and a warning is emitted once per process.
describe('freshness defaults adapt to what is set, and explicit values are honoured', () => {
  test('the backoff floor is warned about once, naming the option, when minRefreshIntervalMs is set below 1 s; a short ttlMs alone warns nothing', async () => {
    create({ baseUrl: BASE, policy: { ttlMs: 100 }, jwks: { ttlMs: 100 } });
    await flush();
    expect(warnings).toStrictEqual([]);
    create({ baseUrl: BASE, policy: { minRefreshIntervalMs: 50 } });
    create({ baseUrl: BASE, policy: { minRefreshIntervalMs: 0 } });
    create({ baseUrl: BASE, jwks: { minRefreshIntervalMs: 50 } });
    await flush();
    const floor = warnings.filter((w) => /BACKOFF_FLOOR$/.test((w as { code?: string }).code ?? ''));
    expect(floor.map((w) => (w as { code?: string }).code)).toStrictEqual(['IAM_AUTHZ_POLICY_BACKOFF_FLOOR', 'IAM_AUTHZ_JWKS_BACKOFF_FLOOR']);
    expect(floor[0]?.message).toMatch(/"policy\.minRefreshIntervalMs" is 50 ms: after a failed fetch with nothing cached the first retry comes within it, later retries are spaced from 1000 ms/);
    expect(floor[1]?.message).toMatch(/"jwks\.minRefreshIntervalMs" is 50 ms/);
  });
  test('an unset minRefreshIntervalMs is the smaller of 5 s and ttlMs, for the policy and the keys alike', () => {
    for (const [ttlMs, expected] of [[100, 100], [4_999, 4_999], [5_000, 5_000], [60_000, 5_000], [undefined, 5_000]] as const) {
      const ttl = ttlMs === undefined ? {} : { ttlMs };
      expect(resolvePolicyOptions(ttl, checks).minRefreshIntervalMs).toBe(expected);
      expect(resolveJwksOptions(ttl, checks).minRefreshIntervalMs).toBe(expected);
    }
    expect(resolvePolicyOptions(undefined, checks)).toMatchObject({ ttlMs: 60_000, minRefreshIntervalMs: 5_000 });
    expect(resolveJwksOptions(undefined, checks)).toMatchObject({ ttlMs: 600_000, minRefreshIntervalMs: 5_000 });
  });

  test('an explicit minRefreshIntervalMs is kept as written, whatever ttlMs is', () => {
    for (const minRefreshIntervalMs of [0, 50, 5_000, 120_000]) {
      expect(resolvePolicyOptions({ ttlMs: 100, minRefreshIntervalMs }, checks).minRefreshIntervalMs).toBe(minRefreshIntervalMs);
      expect(resolveJwksOptions({ ttlMs: 100, minRefreshIntervalMs }, checks).minRefreshIntervalMs).toBe(minRefreshIntervalMs);
    }
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
