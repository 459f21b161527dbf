/**
 * Verified-token cache: a bounded LRU keyed by the token string; an entry lives until
 * `min(exp, verifiedAt + maxTtlMs)` and is never served after `exp`. A cache hit returns the very
 * same frozen Identity object, which is how these tests tell a hit from a fresh verification.
 */
import { describe, expect, test } from 'vitest';
import type { Identity } from '../../src/index.js';
import { TokenCache } from '../../src/token/token-cache.js';
import { Clock, KEY2, NOW_MS, NOW_SEC } from '../helpers/index.js';
import { expectRefused, token, useLoopbackJwks } from './support.js';

const { authorizers, iam } = useLoopbackJwks();

function identity(tokenText: string, exp: number): Identity {
  return Object.freeze({
    token: tokenText,
    header: Object.freeze({ alg: 'RS256', kid: 'k', cty: 't1' }),
    claims: Object.freeze({ iss: 'i', sub: 's', app: 'a', exp, ars: [] }),
  });
}

describe('TokenCache', () => {
  test('a token that only shares the last characters of a cached one is a miss, never a hit', () => {
    const cache = new TokenCache(10, 3_600_000);
    const suffix = 'S'.repeat(43);
    const cachedToken = `aaaa.bbbb.cccc${suffix}`;
    cache.set(identity(cachedToken, NOW_SEC + 10), NOW_MS);
    expect(cache.get(cachedToken, NOW_MS)?.token).toBe(cachedToken);
    expect(cache.get(`xxxx.yyyy.zzzz${suffix}`, NOW_MS)).toBeUndefined();
    expect(cache.get(cachedToken, NOW_MS)?.token).toBe(cachedToken); // and it did not evict it
  });

  test('a verification that started before clear() is not stored after it', () => {
    const cache = new TokenCache(10, 3_600_000);
    const before = cache.generation;
    cache.clear(); // e.g. a JWKS refresh removed a kid while the verification was under way
    cache.set(identity('t', NOW_SEC + 10), NOW_MS, before);
    expect(cache.get('t', NOW_MS)).toBeUndefined();
    cache.set(identity('t', NOW_SEC + 10), NOW_MS, cache.generation);
    expect(cache.get('t', NOW_MS)).toBeDefined();
  });

  test('an entry is served until exp and never at or after it', () => {
    const cache = new TokenCache(10, 3_600_000);
    const id = identity('t', NOW_SEC + 10);
    cache.set(id, NOW_MS);
    expect(cache.get('t', NOW_MS)).toBe(id);
    expect(cache.get('t', NOW_MS + 9_999)).toBe(id);
    expect(cache.get('t', NOW_MS + 10_000)).toBeUndefined();
    expect(cache.get('t', NOW_MS + 9_999)).toBeUndefined(); // dropped, not merely hidden
  });

  test('an entry is served for at most maxTtlMs', () => {
    const cache = new TokenCache(10, 1_000);
    const id = identity('t', NOW_SEC + 3600);
    cache.set(id, NOW_MS);
    expect(cache.get('t', NOW_MS + 999)).toBe(id);
    expect(cache.get('t', NOW_MS + 1_000)).toBeUndefined();
  });

  test('a token already at or past exp (accepted within the clock tolerance) is not stored', () => {
    const cache = new TokenCache(10, 60_000);
    cache.set(identity('t', NOW_SEC), NOW_MS);
    cache.set(identity('u', NOW_SEC - 3), NOW_MS);
    expect(cache.get('t', NOW_MS)).toBeUndefined();
    expect(cache.get('u', NOW_MS - 10_000)).toBeUndefined();
  });

  test('it is bounded: the least recently used entry goes first', () => {
    const cache = new TokenCache(2, 60_000);
    const [a, b, c] = ['a', 'b', 'c'].map((t) => identity(t, NOW_SEC + 3600)) as [Identity, Identity, Identity];
    cache.set(a, NOW_MS);
    cache.set(b, NOW_MS);
    expect(cache.get('a', NOW_MS)).toBe(a); // a is now the most recent
    cache.set(c, NOW_MS); // full: c is only noted (first sight)
    expect(cache.get('c', NOW_MS)).toBeUndefined();
    cache.set(c, NOW_MS); // second sight: stored, the least recently used (b) goes
    expect(cache.get('b', NOW_MS)).toBeUndefined();
    expect(cache.get('a', NOW_MS)).toBe(a);
    expect(cache.get('c', NOW_MS)).toBe(c);
  });

  test('keys are the exact token string', () => {
    const cache = new TokenCache(10, 60_000);
    cache.set(identity('abc', NOW_SEC + 3600), NOW_MS);
    expect(cache.get('abc ', NOW_MS)).toBeUndefined();
    expect(cache.get('ABC', NOW_MS)).toBeUndefined();
  });

  test('once full, a stream of distinct tokens leaves the cached entries alone; a token seen twice gets in', () => {
    const cache = new TokenCache(3, 60_000);
    const kept = ['k1', 'k2', 'k3'].map((t) => identity(t, NOW_SEC + 3600));
    for (const id of kept) cache.set(id, NOW_MS);
    for (let i = 0; i < 5_000; i++) cache.set(identity(`${'x'.repeat(50)}-distinct-${i}`, NOW_SEC + 3600), NOW_MS);
    for (const id of kept) expect(cache.get(id.token, NOW_MS)).toBe(id);
    const again = identity('seen-twice', NOW_SEC + 3600);
    cache.set(again, NOW_MS);
    expect(cache.get('seen-twice', NOW_MS)).toBeUndefined();
    cache.set(again, NOW_MS);
    expect(cache.get('seen-twice', NOW_MS)).toBe(again);
  });

  test('clear() forgets the tokens seen once too', () => {
    const cache = new TokenCache(1, 60_000);
    cache.set(identity('a', NOW_SEC + 3600), NOW_MS);
    cache.set(identity('b', NOW_SEC + 3600), NOW_MS); // full: noted
    cache.clear();
    cache.set(identity('a', NOW_SEC + 3600), NOW_MS); // room again: stored
    cache.set(identity('b', NOW_SEC + 3600), NOW_MS); // full, and b's note was cleared: noted only
    expect(cache.get('b', NOW_MS)).toBeUndefined();
    expect(cache.get('a', NOW_MS)).toBeDefined();
  });

  test('clear() empties it', () => {
    const cache = new TokenCache(10, 60_000);
    cache.set(identity('t', NOW_SEC + 3600), NOW_MS);
    cache.clear();
    expect(cache.get('t', NOW_MS)).toBeUndefined();
  });
});

describe('the cache inside authenticate', () => {
  test('a repeated token is served from the cache: same Identity object, no JWKS refetch', async () => {
    const authz = iam.authorizer();
    const t = iam.token();
    const first = await authz.authenticate(`Bearer ${t}`);
    const second = await authz.authenticate(`Bearer ${t}`);
    const third = await authz.authenticate(`bearer ${t}`);
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(iam.requests).toHaveLength(1);
  });

  test('tokenCache: false verifies every time (a new Identity per call)', async () => {
    const authz = iam.authorizer({ tokenCache: false });
    const t = iam.token();
    const first = await authz.authenticate(`Bearer ${t}`);
    const second = await authz.authenticate(`Bearer ${t}`);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });

  test('a cached token is never served after its exp (advancing the injected clock, no tolerance)', async () => {
    const { clock } = iam;
    const authz = iam.authorizer({ clockToleranceSec: 0 });
    const t = iam.token({ exp: NOW_SEC + 10 });
    const first = await authz.authenticate(`Bearer ${t}`);
    clock.advance(9_999);
    expect(await authz.authenticate(`Bearer ${t}`)).toBe(first);
    clock.advance(1);
    await expectRefused(authz, t, 'ERR_TOKEN_EXPIRED');
  });

  test('with the default tolerance, a token past exp is re-verified (not served from cache) and refused 5 s after exp', async () => {
    const { clock } = iam;
    const authz = iam.authorizer();
    const t = iam.token({ exp: NOW_SEC + 10 });
    const first = await authz.authenticate(`Bearer ${t}`);
    clock.advance(10_000);
    const late = await authz.authenticate(`Bearer ${t}`);
    expect(late).not.toBe(first); // verified again inside the tolerance window
    clock.advance(4_999);
    expect(await authz.authenticate(`Bearer ${t}`)).not.toBe(first);
    clock.advance(1);
    await expectRefused(authz, t, 'ERR_TOKEN_EXPIRED');
  });

  test('tokenCache.maxTtlMs bounds how long a verified token is reused', async () => {
    const { clock } = iam;
    const authz = iam.authorizer({ tokenCache: { maxTtlMs: 1_000 } });
    const t = iam.token();
    const first = await authz.authenticate(`Bearer ${t}`);
    clock.advance(999);
    expect(await authz.authenticate(`Bearer ${t}`)).toBe(first);
    clock.advance(1);
    const second = await authz.authenticate(`Bearer ${t}`);
    expect(second).not.toBe(first);
    expect(await authz.authenticate(`Bearer ${t}`)).toBe(second);
  });

  test('tokenCache.max bounds the number of tokens kept', async () => {
    const authz = iam.authorizer({ tokenCache: { max: 2 } });
    const [a, b, c] = ['a', 'b', 'c'].map((j) => iam.token({ jti: j })) as [string, string, string];
    const idA = await authz.authenticate(`Bearer ${a}`);
    await authz.authenticate(`Bearer ${b}`);
    const idC = await authz.authenticate(`Bearer ${c}`); // full: verified, not stored
    const idC2 = await authz.authenticate(`Bearer ${c}`); // second verification: stored, a goes
    expect(idC2).not.toBe(idC);
    expect(await authz.authenticate(`Bearer ${c}`)).toBe(idC2);
    expect(await authz.authenticate(`Bearer ${a}`)).not.toBe(idA);
  });

  test('the default cache keeps a token for 5 minutes at most', async () => {
    const { clock } = iam;
    const authz = iam.authorizer();
    const t = iam.token();
    const first = await authz.authenticate(`Bearer ${t}`);
    clock.advance(299_999);
    expect(await authz.authenticate(`Bearer ${t}`)).toBe(first);
    clock.advance(1);
    expect(await authz.authenticate(`Bearer ${t}`)).not.toBe(first);
  });

  test('a cached token still needs the Bearer scheme', async () => {
    const authz = iam.authorizer();
    const t = iam.token();
    await authz.authenticate(`Bearer ${t}`);
    await expectRefused(authz, t, 'ERR_TOKEN_MISSING', { authorization: `Basic ${t}` });
    await expectRefused(authz, t, 'ERR_TOKEN_MISSING', { authorization: t });
  });

  test('the Identity (also when shared through the cache) is frozen all the way down to ars', async () => {
    const authz = iam.authorizer();
    const t = iam.token();
    const id = await authz.authenticate(`Bearer ${t}`);
    for (const part of [id, id.header, id.claims, id.claims.ars, id.claims.ars[0], id.claims.ars[0]!.r, id.claims.ars[0]!.c, id.claims.ars[0]!.n]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    expect(() => { (id.claims as { sub: string }).sub = 'actor-admin'; }).toThrow(TypeError);
    expect(() => { (id.claims.ars[0]!.r as string[]).push('OWNER'); }).toThrow(TypeError);
    expect(() => { (id.header as { kid: string }).kid = 'x'; }).toThrow(TypeError);
    const again = await authz.authenticate(`Bearer ${t}`);
    expect(again).toBe(id);
    expect(again.claims.sub).toBe('actor-alice');
    expect(again.claims.ars).toEqual([{ r: ['DRIVER'], c: ['VIN=WVW1'], n: [] }]);
  });

  test('nested custom claims and header members are frozen too (the cached Identity is shared)', async () => {
    const authz = iam.authorizer();
    const t = iam.token({ profile: { roles: ['DRIVER'], org: { id: 'o-1' } } }, { ext: { v: 1 } });
    const id = await authz.authenticate(`Bearer ${t}`);
    const profile = id.claims.profile as { roles: string[]; org: { id: string } };
    expect(() => { profile.roles.push('OWNER'); }).toThrow(TypeError);
    expect(() => { profile.org.id = 'o-2'; }).toThrow(TypeError);
    expect(() => { (id.header.ext as { v: number }).v = 2; }).toThrow(TypeError);
    const again = await authz.authenticate(`Bearer ${t}`);
    expect(again).toBe(id);
    expect(again.claims.profile).toEqual({ roles: ['DRIVER'], org: { id: 'o-1' } });
  });

  test('a cached token stops being served once its key is removed from the JWKS (rotation)', async () => {
    const authz = iam.authorizer({ jwks: { minRefreshIntervalMs: 0 } });
    const oldToken = iam.token();
    await authz.authenticate(`Bearer ${oldToken}`);
    iam.keys = [KEY2.jwk]; // KEY retired, KEY2 published
    iam.clock.advance(1_000);
    // A token under the new kid makes the key set refetch; key-1 disappears from the set.
    await authz.authenticate(iam.bearer({}, {}, KEY2));
    await expectRefused(authz, oldToken, 'ERR_TOKEN_INVALID');
  });

  test('refusals are not cached: a not-yet-valid token passes once the clock reaches nbf', async () => {
    const clock = new Clock();
    const authz = authorizers.static({ now: clock.now, clockToleranceSec: 0 });
    const t = token({ nbf: NOW_SEC + 2 });
    await expectRefused(authz, t, 'ERR_TOKEN_NOT_YET_VALID');
    clock.advance(2_000);
    expect((await authz.authenticate(`Bearer ${t}`)).token).toBe(t);
  });
});
