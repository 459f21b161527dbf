/**
 * Unknown, absent and non-string kids against a real loopback JWKS: refetches for unknown kids are
 * bounded to one per cooldown and shared by concurrent callers; a kid that is not a non-empty
 * string never causes a fetch.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, test } from 'vitest';
import { type Authorizer } from '../../src/index.js';
import { b64url } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { json, KEY, mint } from '../helpers/index.js';
import { bearer, expectAuthzError, useJwksServer } from './harness.js';

const JWKS = { ttlMs: 60_000, minRefreshIntervalMs: 1_000, maxStaleMs: 600_000, timeoutMs: 2_000 };

const ctx = useJwksServer(JWKS);
let baseToken: string;

/**
 * A token naming a kid the JWKS has never held. Only the header changes between calls: no key is
 * ever found for it, so its signature is never checked (and minting 250 RSA signatures is slow).
 */
function unknownKidToken(): string {
  const [, payload, signature] = baseToken.split('.');
  const header = b64url(JSON.stringify({ alg: 'RS256', kid: `unknown-${randomUUID()}`, cty: 't1' }));
  return bearer(`${header}.${payload!}.${signature!}`);
}

async function flood(a: Authorizer, n: number): Promise<PromiseSettledResult<unknown>[]> {
  return Promise.allSettled(Array.from({ length: n }, () => a.authenticate(unknownKidToken())));
}

function expectAll401(results: PromiseSettledResult<unknown>[]): void {
  for (const r of results) {
    expect(r.status).toBe('rejected');
    expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'ERR_TOKEN_INVALID', status: 401 });
  }
}

beforeEach(() => {
  // Answer after 30 ms so that concurrent callers really overlap one fetch.
  const keys = { keys: [KEY.jwk] };
  ctx.server.handler = (_req, res) => { setTimeout(() => { json(res, 200, keys); }, 30); };
  baseToken = mint(ctx.server.url);
});

describe('unknown kid', () => {
  test('50 concurrent unknown kids cause exactly one fetch per cooldown', async () => {
    const a = ctx.make();
    await a.ready();
    expect(ctx.server.requests).toHaveLength(1);

    // Still inside the cooldown of the warm-up fetch: no fetch at all.
    expectAll401(await flood(a, 50));
    expect(ctx.server.requests).toHaveLength(1);

    ctx.clock.advance(JWKS.minRefreshIntervalMs);
    expectAll401(await flood(a, 50));
    expect(ctx.server.requests).toHaveLength(2);

    // Same instant, and one ms short of the next cooldown: nothing more.
    expectAll401(await flood(a, 50));
    ctx.clock.advance(JWKS.minRefreshIntervalMs - 1);
    expectAll401(await flood(a, 50));
    expect(ctx.server.requests).toHaveLength(2);

    ctx.clock.advance(1);
    expectAll401(await flood(a, 50));
    expect(ctx.server.requests).toHaveLength(3);
    expect(ctx.events.events.map((e) => e.type)).toEqual(['refreshed', 'refreshed', 'refreshed']);

    // The flood did not disturb the known key.
    await a.authenticate(bearer(mint(ctx.server.url)));
    expect(ctx.server.requests).toHaveLength(3);
  });

  test('a cold-start flood of 50 unknown kids shares a single fetch', async () => {
    const a = ctx.make();
    expectAll401(await flood(a, 50));
    expect(ctx.server.requests).toHaveLength(1);
  });

  test('a cold-start burst of 50 valid tokens shares a single fetch', async () => {
    const a = ctx.make();
    const results = await Promise.all(Array.from({ length: 50 }, () => a.authenticate(bearer(mint(ctx.server.url)))));
    expect(results).toHaveLength(50);
    expect(ctx.server.requests).toHaveLength(1);
  });

  test('a cooldown of 0 still shares one fetch among concurrent callers', async () => {
    const a = ctx.make({ jwks: { ...JWKS, minRefreshIntervalMs: 0 } });
    await a.ready();
    expectAll401(await flood(a, 50));
    expect(ctx.server.requests).toHaveLength(2);
  });

  const badKids: [string, Record<string, unknown>][] = [
    ['absent', { kid: undefined }],
    ['numeric', { kid: 123 }],
    ['null', { kid: null }],
    ['empty string', { kid: '' }],
    ['array', { kid: ['key-1'] }],
    ['object', { kid: { id: 'key-1' } }],
    ['boolean', { kid: true }],
  ];

  test.each(badKids)('%s kid: 401 and zero fetches, cold or warm', async (_name, header) => {
    const token = bearer(mint(ctx.server.url, {}, header));
    const a = ctx.make();
    await expectAuthzError(a.authenticate(token), 'ERR_TOKEN_INVALID', 401);
    expect(ctx.server.requests).toHaveLength(0);

    await a.ready();
    ctx.clock.advance(JWKS.minRefreshIntervalMs * 10);
    await expectAuthzError(a.authenticate(token), 'ERR_TOKEN_INVALID', 401);
    expect(ctx.server.requests).toHaveLength(1);
  });

  test('an unknown kid while the endpoint is failing is a 503, not a 401', async () => {
    const a = ctx.make();
    await a.ready();
    ctx.server.handler = (_req, res) => { json(res, 500, { error: 'down' }); };
    ctx.clock.advance(JWKS.minRefreshIntervalMs);
    const token = unknownKidToken();
    const error = await expectAuthzError(a.authenticate(token), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(error.message).not.toContain(token.slice(7));
    expect((error.cause as { reason?: unknown }).reason).toBe('status');
    expect(ctx.server.requests).toHaveLength(2);
    // The cached key still verifies meanwhile.
    await a.authenticate(bearer(mint(ctx.server.url)));
    expect(ctx.server.requests).toHaveLength(2);
  });
});
