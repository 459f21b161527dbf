/** Key rotation against a real loopback JWKS: keys added and removed without a restart. */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createAuthorizer, type Authorizer } from '../../src/index.js';
import { generateSigningKey } from '../../src/testing/sign-jwt.js';
import { KEY, KEY2, mint, startJwksServer } from '../helpers/fixtures.js';
import { bearer, expectAuthzError, JWKS_PATH, manualClock, recordJwksEvents, type Clock, type EventRecorder } from './harness.js';

const KEY3 = generateSigningKey({ kid: 'key-3' });

const JWKS = { cacheMaxAgeMs: 60_000, cooldownMs: 1_000, maxStaleMs: 600_000, timeoutMs: 2_000 };

let server: Awaited<ReturnType<typeof startJwksServer>>;
let clock: Clock;
let events: EventRecorder;
let authz: Authorizer | undefined;

beforeEach(async () => {
  server = await startJwksServer([KEY]);
  clock = manualClock();
  events = recordJwksEvents(server.url);
});

afterEach(async () => {
  await authz?.close();
  authz = undefined;
  events.dispose();
  await server.close();
});

describe('rotation', () => {
  test('a new kid verifies without restart once the cooldown allows the refetch', async () => {
    authz = createAuthorizer({ baseUrl: server.url, now: clock.now, tokenCache: false, jwks: JWKS });
    await authz.authenticate(bearer(mint(server.url)));
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.method).toBe('GET');
    expect(server.requests[0]!.url).toBe(JWKS_PATH);

    server.setKeys([KEY.jwk, KEY2.jwk]);
    const token2 = bearer(mint(server.url, {}, {}, KEY2));
    // Within the cooldown of the first fetch an unknown kid is refused without asking again.
    await expectAuthzError(authz.authenticate(token2), 'ERR_TOKEN_INVALID', 401);
    expect(server.requests).toHaveLength(1);

    clock.advance(JWKS.cooldownMs);
    const id = await authz.authenticate(token2);
    expect(id.header.kid).toBe('key-2');
    expect(server.requests).toHaveLength(2);

    // Both keys now verify from the cache.
    await authz.authenticate(token2);
    await authz.authenticate(bearer(mint(server.url)));
    expect(server.requests).toHaveLength(2);
  });

  test('a removed kid is refused once a background refresh has seen the new set', async () => {
    authz = createAuthorizer({ baseUrl: server.url, now: clock.now, tokenCache: false, jwks: JWKS });
    const token1 = bearer(mint(server.url));
    const token2 = bearer(mint(server.url, {}, {}, KEY2));
    await authz.authenticate(token1);

    server.setKeys([KEY2.jwk]);
    clock.advance(JWKS.cacheMaxAgeMs + 1);
    // Stale-while-revalidate: this request is answered from the cached keys and starts a refresh.
    await authz.authenticate(token1);
    await events.until(2);
    expect(events.events[1]).toMatchObject({ type: 'refreshed', keyCount: 1, removedKids: ['key-1'] });
    expect(server.requests).toHaveLength(2);

    await expectAuthzError(authz.authenticate(token1), 'ERR_TOKEN_INVALID', 401);
    await authz.authenticate(token2);
    expect(server.requests).toHaveLength(2);
  });

  test('a kid added and another removed in one rotation, seen through the unknown-kid refetch', async () => {
    authz = createAuthorizer({ baseUrl: server.url, now: clock.now, tokenCache: false, jwks: JWKS });
    const token1 = bearer(mint(server.url));
    await authz.authenticate(token1);

    server.setKeys([KEY2.jwk, KEY3.jwk]);
    clock.advance(JWKS.cooldownMs);
    const id = await authz.authenticate(bearer(mint(server.url, {}, {}, KEY3)));
    expect(id.header.kid).toBe('key-3');
    expect(server.requests).toHaveLength(2);
    await expectAuthzError(authz.authenticate(token1), 'ERR_TOKEN_INVALID', 401);
    expect(server.requests).toHaveLength(2);
  });

  test('a token of a removed kid is dropped from the verified-token cache', async () => {
    // Token cache on: without the drop, token1 would keep being served from the cache.
    authz = createAuthorizer({ baseUrl: server.url, now: clock.now, tokenCache: { max: 100, maxTtlMs: 3_600_000 }, jwks: JWKS });
    const token1 = bearer(mint(server.url));
    await authz.authenticate(token1);
    await authz.authenticate(token1);
    expect(server.requests).toHaveLength(1);

    server.setKeys([KEY2.jwk]);
    clock.advance(JWKS.cooldownMs);
    // Served from the cache: nothing has told the authorizer about the rotation yet.
    await authz.authenticate(token1);
    expect(server.requests).toHaveLength(1);

    // A key-2 token makes the client refetch; key-1 is gone from the new set.
    await authz.authenticate(bearer(mint(server.url, {}, {}, KEY2)));
    expect(server.requests).toHaveLength(2);
    expect(events.events.at(-1)).toMatchObject({ type: 'refreshed', removedKids: ['key-1'] });

    await expectAuthzError(authz.authenticate(token1), 'ERR_TOKEN_INVALID', 401);
    expect(server.requests).toHaveLength(2);
  });

  test('a token of a kid that stays in the set keeps verifying across a rotation', async () => {
    authz = createAuthorizer({ baseUrl: server.url, now: clock.now, tokenCache: false, jwks: JWKS });
    const token1 = bearer(mint(server.url));
    await authz.authenticate(token1);
    server.setKeys([KEY.jwk, KEY2.jwk]);
    clock.advance(JWKS.cacheMaxAgeMs + 1);
    await authz.authenticate(token1);
    await events.until(2);
    expect(events.events[1]).toMatchObject({ type: 'refreshed', keyCount: 2, removedKids: [] });
    await authz.authenticate(token1);
    await authz.authenticate(bearer(mint(server.url, {}, {}, KEY2)));
    expect(server.requests).toHaveLength(2);
  });
});
