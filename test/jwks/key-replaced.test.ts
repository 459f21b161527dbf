/**
 * A key replaced at the IAM under the same `kid` (issue #9 §2). Keys are compared by RFC 7638
 * thumbprint, not only by kid: a changed key counts as removed (the verified-token cache is cleared,
 * so tokens of the old key stop being served), and a signature failure on a known kid triggers the
 * same cooldown-bounded, single-flight refetch as an unknown kid, then one more verify.
 */
import { describe, expect, test } from 'vitest';
import { generateSigningKey } from 'iam-authz-dev';
import { KEY, useIam } from '../helpers/index.js';

const REPLACEMENT = generateSigningKey({ kid: KEY.kid });
const iam = useIam();

function setup(minRefreshIntervalMs = 1_000) {
  return { clock: iam.clock, authz: iam.authorizer({ jwks: { minRefreshIntervalMs } }) };
}

describe('a key replaced under the same kid', () => {
  test('a token of the new key is accepted at once: the signature failure refetches, then verifies again', async () => {
    const { clock, authz } = setup();
    await authz.authenticate(iam.bearer());
    expect(iam.requests).toHaveLength(1);
    iam.keys = [REPLACEMENT.jwk];
    clock.advance(1_000); // past the cooldown, well inside ttlMs
    const identity = await authz.authenticate(iam.bearer({ jti: 'new' }, {}, REPLACEMENT));
    expect(identity.claims.jti).toBe('new');
    expect(iam.requests).toHaveLength(2);
  });

  test('a cached token of the old key is no longer served once the replacement is seen', async () => {
    const { clock, authz } = setup();
    const old = iam.bearer();
    const first = await authz.authenticate(old);
    expect(await authz.authenticate(old)).toBe(first); // a cache hit
    iam.keys = [REPLACEMENT.jwk];
    clock.advance(1_000);
    await authz.authenticate(iam.bearer({ jti: 'new' }, {}, REPLACEMENT)); // sees the new key
    const error = await authz.authenticate(old).then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'ERR_TOKEN_INVALID', status: 401 });
  });

  test('the scheduled refresh notices a replaced key too (cache-hit traffic only)', async () => {
    const { clock, authz } = setup();
    const old = iam.bearer();
    await authz.authenticate(old);
    iam.keys = [REPLACEMENT.jwk];
    clock.advance(600_001); // past ttlMs: a cache hit starts the background refresh
    await authz.authenticate(old);
    await expect.poll(() => iam.requests.length).toBe(2);
    await expect(authz.authenticate(old)).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' });
  });

  test('forged signatures on a known kid: one refetch per cooldown however many, all 401', async () => {
    const { clock, authz } = setup(5_000);
    const good = iam.token();
    await authz.authenticate(`Bearer ${good}`);
    clock.advance(5_000);
    const forged = (i: number) => `Bearer ${iam.token({ jti: `f${i}` }).replace(/\.[^.]+$/, `.${good.split('.')[2]!}`)}`;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => authz.authenticate(forged(i)).then(() => 'granted', (e: unknown) => (e as { code: string }).code)));
    expect(new Set(results)).toStrictEqual(new Set(['ERR_TOKEN_INVALID']));
    expect(iam.requests).toHaveLength(2); // the initial fetch and one shared refetch
    for (let i = 50; i < 60; i++) await expect(authz.authenticate(forged(i))).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' });
    expect(iam.requests).toHaveLength(2); // inside the cooldown: no more
  });

  test('an unchanged JWKS after a failed signature: 401, and no loop', async () => {
    const { clock, authz } = setup();
    await authz.authenticate(iam.bearer());
    clock.advance(1_000);
    const other = generateSigningKey({ kid: KEY.kid }); // signs under the kid, but is not published
    await expect(authz.authenticate(iam.bearer({ jti: 'x' }, {}, other))).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' });
    expect(iam.requests).toHaveLength(2);
  });
});
