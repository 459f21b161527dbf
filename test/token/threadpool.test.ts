/**
 * `verify: 'threadpool'` (issue #14 §3): signatures checked in libuv's pool give the same answers as
 * inline — valid tokens accepted, forged ones refused, a replaced key picked up — including in a
 * burst larger than `maxPoolVerifications`, where the rest run inline.
 */
import { describe, expect, test } from 'vitest';
import { createAuthorizer } from '../../src/index.js';
import { generateSigningKey } from 'iam-authz-dev';
import { Clock, KEY, mint, NOW_MS, startJwksServer } from '../helpers/index.js';

describe("verify: 'threadpool'", () => {
  test('a burst of distinct valid and forged tokens, more than the pool may hold: the same answers as inline', async () => {
    const jwks = await startJwksServer([KEY]);
    const pool = createAuthorizer({ baseUrl: jwks.url, now: () => NOW_MS, verify: 'threadpool', maxPoolVerifications: 3, tokenCache: false });
    const inline = createAuthorizer({ baseUrl: jwks.url, now: () => NOW_MS, tokenCache: false });
    try {
      const good = Array.from({ length: 40 }, (_, i) => mint(jwks.url, { jti: `t${i}` }));
      const forged = good.slice(0, 10).map((t, i) => t.replace(/\.[^.]+$/, `.${good[(i + 1) % 10]!.split('.')[2]!}`));
      const all = [...good, ...forged];
      const answer = (a: typeof pool) => Promise.all(all.map((t) => a.authenticate(`Bearer ${t}`).then((id) => id.claims.jti, (e: unknown) => (e as { code: string }).code)));
      const [viaPool, viaInline] = await Promise.all([answer(pool), answer(inline)]);
      expect(viaPool).toStrictEqual(viaInline);
      expect(viaPool.filter((x) => x === 'ERR_TOKEN_INVALID')).toHaveLength(10);
    } finally {
      await Promise.all([pool.close(), inline.close()]);
      await jwks.close();
    }
  });

  test('a key replaced under the same kid is picked up after a failure in the pool', async () => {
    const jwks = await startJwksServer([KEY]);
    const clock = new Clock();
    const pool = createAuthorizer({ baseUrl: jwks.url, now: clock.now, verify: 'threadpool', jwks: { minRefreshIntervalMs: 1_000 } });
    try {
      await pool.authenticate(`Bearer ${mint(jwks.url)}`);
      const replacement = generateSigningKey({ kid: KEY.kid });
      jwks.setKeys([replacement.jwk]);
      clock.advance(1_000);
      expect((await pool.authenticate(`Bearer ${mint(jwks.url, { jti: 'new' }, {}, replacement)}`)).claims.jti).toBe('new');
    } finally {
      await pool.close();
      await jwks.close();
    }
  });

  test('options are checked', () => {
    expect(() => createAuthorizer({ baseUrl: 'http://127.0.0.1:1', verify: 'gpu' as never })).toThrow(/"verify"/);
    expect(() => createAuthorizer({ baseUrl: 'http://127.0.0.1:1', maxPoolVerifications: 0 })).toThrow(/"maxPoolVerifications"/);
  });
});
