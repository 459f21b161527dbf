/**
 * `verify: 'threadpool'` (issue #14 §3): signatures checked in libuv's pool give the same answers as
 * inline — valid tokens accepted, forged ones refused, a replaced key picked up — including in a
 * burst larger than `maxPoolVerifications`, where the rest run inline.
 */
import { describe, expect, test } from 'vitest';
import { createAuthorizer } from '../../src/index.js';
import { generateSigningKey } from 'iam-authz-dev';
import { KEY, useIam } from '../helpers/index.js';

const iam = useIam();

describe("verify: 'threadpool'", () => {
  test('a burst of distinct valid and forged tokens, more than the pool may hold: the same answers as inline', async () => {
    const pool = iam.authorizer({ verify: 'threadpool', maxPoolVerifications: 3, tokenCache: false });
    const inline = iam.authorizer({ tokenCache: false });
    const good = Array.from({ length: 40 }, (_, i) => iam.token({ jti: `t${i}` }));
    const forged = good.slice(0, 10).map((t, i) => t.replace(/\.[^.]+$/, `.${good[(i + 1) % 10]!.split('.')[2]!}`));
    const all = [...good, ...forged];
    const answer = (a: typeof pool) => Promise.all(all.map((t) => a.authenticate(`Bearer ${t}`).then((id) => id.claims.jti, (e: unknown) => (e as { code: string }).code)));
    const [viaPool, viaInline] = await Promise.all([answer(pool), answer(inline)]);
    expect(viaPool).toStrictEqual(viaInline);
    expect(viaPool.filter((x) => x === 'ERR_TOKEN_INVALID')).toHaveLength(10);
  });

  test('a key replaced under the same kid is picked up after a failure in the pool', async () => {
    const pool = iam.authorizer({ verify: 'threadpool', jwks: { minRefreshIntervalMs: 1_000 } });
    await pool.authenticate(iam.bearer());
    const replacement = generateSigningKey({ kid: KEY.kid });
    iam.keys = [replacement.jwk];
    iam.clock.advance(1_000);
    expect((await pool.authenticate(iam.bearer({ jti: 'new' }, {}, replacement))).claims.jti).toBe('new');
  });

  test('options are checked', () => {
    expect(() => createAuthorizer({ baseUrl: 'http://127.0.0.1:1', verify: 'gpu' as never })).toThrow(/"verify"/);
    expect(() => createAuthorizer({ baseUrl: 'http://127.0.0.1:1', maxPoolVerifications: 0 })).toThrow(/"maxPoolVerifications"/);
  });
});
