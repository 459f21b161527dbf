/** Key rotation against a real loopback JWKS: keys added and removed without a restart. */
import { describe, expect, test } from 'vitest';
import { generateSigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { json, KEY, KEY2, mint } from '../helpers/index.js';
import { bearer, expectAuthzError, JWKS_PATH, useJwksServer } from './harness.js';

const KEY3 = generateSigningKey({ kid: 'key-3' });

const JWKS = { ttlMs: 60_000, minRefreshIntervalMs: 1_000, maxStaleMs: 600_000, timeoutMs: 2_000 };

const ctx = useJwksServer(JWKS);

describe('rotation', () => {
  test('a new kid verifies without restart once the cooldown allows the refetch', async () => {
    const authz = ctx.make();
    await authz.authenticate(bearer(mint(ctx.server.url)));
    expect(ctx.server.requests).toHaveLength(1);
    expect(ctx.server.requests[0]!.method).toBe('GET');
    expect(ctx.server.requests[0]!.url).toBe(JWKS_PATH);

    ctx.server.keys = [KEY.jwk, KEY2.jwk];
    const token2 = bearer(mint(ctx.server.url, {}, {}, KEY2));
    // Within the cooldown of the first fetch an unknown kid is refused without asking again.
    await expectAuthzError(authz.authenticate(token2), 'ERR_TOKEN_INVALID', 401);
    expect(ctx.server.requests).toHaveLength(1);

    ctx.clock.advance(JWKS.minRefreshIntervalMs);
    const id = await authz.authenticate(token2);
    expect(id.header.kid).toBe('key-2');
    expect(ctx.server.requests).toHaveLength(2);

    // Both keys now verify from the cache.
    await authz.authenticate(token2);
    await authz.authenticate(bearer(mint(ctx.server.url)));
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('a new kid right after an outage is fetched after the short backoff, not the served keys\' long one', async () => {
    const authz = ctx.make();
    await authz.authenticate(bearer(mint(ctx.server.url)));
    const keys = { keys: [KEY.jwk, KEY2.jwk] };
    ctx.server.handler = (_req, res) => { json(res, 503, { error: 'down' }); };
    ctx.clock.advance(JWKS.ttlMs);
    await authz.authenticate(bearer(mint(ctx.server.url))); // served from the cache; the refresh fails
    await ctx.events.until(2);
    expect(ctx.events.events[1]).toMatchObject({ type: 'failed' });
    // The cached keys are served: background refreshes back off from 0.8 × ttlMs (48 s here)...
    expect(Object.values(authz.status().issuers)[0]!.nextRefreshAt).toBe(ctx.clock.now() + 0.8 * JWKS.ttlMs);
    // ...but the IAM is back with a new key, and a token needs it: asked after the short backoff.
    ctx.server.handler = (_req, res) => { json(res, 200, keys); };
    ctx.clock.advance(JWKS.minRefreshIntervalMs);
    const id = await authz.authenticate(bearer(mint(ctx.server.url, {}, {}, KEY2)));
    expect(id.header.kid).toBe('key-2');
    expect(ctx.server.requests).toHaveLength(3);
  });

  test('a removed kid is refused once a background refresh has seen the new set', async () => {
    const authz = ctx.make();
    const token1 = bearer(mint(ctx.server.url));
    const token2 = bearer(mint(ctx.server.url, {}, {}, KEY2));
    await authz.authenticate(token1);

    ctx.server.keys = [KEY2.jwk];
    ctx.clock.advance(JWKS.ttlMs + 1);
    // Stale-while-revalidate: this request is answered from the cached keys and starts a refresh.
    await authz.authenticate(token1);
    await ctx.events.until(2);
    expect(ctx.events.events[1]).toMatchObject({ type: 'refreshed', keyCount: 1, removedKids: ['key-1'] });
    expect(ctx.server.requests).toHaveLength(2);

    await expectAuthzError(authz.authenticate(token1), 'ERR_TOKEN_INVALID', 401);
    await authz.authenticate(token2);
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('a kid added and another removed in one rotation, seen through the unknown-kid refetch', async () => {
    const authz = ctx.make();
    const token1 = bearer(mint(ctx.server.url));
    await authz.authenticate(token1);

    ctx.server.keys = [KEY2.jwk, KEY3.jwk];
    ctx.clock.advance(JWKS.minRefreshIntervalMs);
    const id = await authz.authenticate(bearer(mint(ctx.server.url, {}, {}, KEY3)));
    expect(id.header.kid).toBe('key-3');
    expect(ctx.server.requests).toHaveLength(2);
    await expectAuthzError(authz.authenticate(token1), 'ERR_TOKEN_INVALID', 401);
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('a token of a removed kid is dropped from the verified-token cache', async () => {
    // Token cache on: without the drop, token1 would keep being served from the cache.
    const authz = ctx.make({ tokenCache: { max: 100, maxTtlMs: 3_600_000 } });
    const token1 = bearer(mint(ctx.server.url));
    await authz.authenticate(token1);
    await authz.authenticate(token1);
    expect(ctx.server.requests).toHaveLength(1);

    ctx.server.keys = [KEY2.jwk];
    ctx.clock.advance(JWKS.minRefreshIntervalMs);
    // Served from the cache: nothing has told the authorizer about the rotation yet.
    await authz.authenticate(token1);
    expect(ctx.server.requests).toHaveLength(1);

    // A key-2 token makes the client refetch; key-1 is gone from the new set.
    await authz.authenticate(bearer(mint(ctx.server.url, {}, {}, KEY2)));
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.events.events.at(-1)).toMatchObject({ type: 'refreshed', removedKids: ['key-1'] });

    await expectAuthzError(authz.authenticate(token1), 'ERR_TOKEN_INVALID', 401);
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('with nothing but cache hits, a removed kid is still noticed once the keys are older than ttlMs', async () => {
    const authz = ctx.make({ tokenCache: { max: 100, maxTtlMs: 3_600_000 } });
    const token1 = bearer(mint(ctx.server.url));
    await authz.authenticate(token1);
    ctx.server.keys = [KEY2.jwk];
    ctx.clock.advance(JWKS.ttlMs - 1);
    await authz.authenticate(token1); // a hit, keys still young: no fetch
    expect(ctx.server.requests).toHaveLength(1);
    ctx.clock.advance(2);
    await authz.authenticate(token1); // a hit that starts the background refresh
    await ctx.events.until(2);
    expect(ctx.events.events[1]).toMatchObject({ type: 'refreshed', removedKids: ['key-1'] });
    expect(ctx.server.requests).toHaveLength(2);
    await expectAuthzError(authz.authenticate(token1), 'ERR_TOKEN_INVALID', 401);
  });

  test('a token of a kid that stays in the set keeps verifying across a rotation', async () => {
    const authz = ctx.make();
    const token1 = bearer(mint(ctx.server.url));
    await authz.authenticate(token1);
    ctx.server.keys = [KEY.jwk, KEY2.jwk];
    ctx.clock.advance(JWKS.ttlMs + 1);
    await authz.authenticate(token1);
    await ctx.events.until(2);
    expect(ctx.events.events[1]).toMatchObject({ type: 'refreshed', keyCount: 2, removedKids: [] });
    await authz.authenticate(token1);
    await authz.authenticate(bearer(mint(ctx.server.url, {}, {}, KEY2)));
    expect(ctx.server.requests).toHaveLength(2);
  });
});
