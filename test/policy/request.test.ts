/**
 * What the policy request looks like (spec §4.2: the caller authenticates with its IAM token),
 * the `policyToken` option, the default `policyUrl`, and `check()` = authenticate + authorize.
 */
import { describe, expect, test } from 'vitest';
import { PermissionDeniedError, type PolicyOptions } from '../../src/index.js';
import { BASE, mint, TEST_JWKS, expectAuthzError, identityFor, READ, upstreamReason, usePolicyApi, WRITE } from './harness.js';

const P = { ttlMs: 10_000, maxStaleMs: 60_000, minRefreshIntervalMs: 1_000, timeoutMs: 3_000 } satisfies PolicyOptions;

const ctx = usePolicyApi();

describe('the policy request', () => {
  test("GET policyUrl with Authorization: Bearer <the caller's token> and Accept: application/json", async () => {
    const authz = ctx.authorizer(P);
    const token = mint(BASE, { app: ctx.app });
    const id = await authz.authenticate(`Bearer ${token}`);
    await authz.authorize(id, READ);
    expect(ctx.server.requests).toHaveLength(1);
    const req = ctx.server.requests[0]!;
    expect(req.method).toBe('GET');
    expect(req.url).toBe('/policy/v1/roles');
    expect(req.headers.authorization).toBe(`Bearer ${token}`);
    expect(req.headers.accept).toBe('application/json');
    expect(req.headers['if-none-match']).toBeUndefined();
  });

  test('a revalidation carries the token of the caller that triggered it', async () => {
    const authz = ctx.authorizer(P);
    const first = mint(BASE, { app: ctx.app, sub: 'first' });
    const second = mint(BASE, { app: ctx.app, sub: 'second' });
    await authz.authorize(await authz.authenticate(`Bearer ${first}`), READ);
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(await authz.authenticate(`Bearer ${second}`), READ);
    await ctx.events.until('revalidated');
    expect(ctx.server.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${first}`, `Bearer ${second}`]);
    expect(ctx.server.requests[1]!.headers.accept).toBe('application/json');
  });

  test('policyToken: the service token is sent instead of the caller\'s, for every fetch', async () => {
    let calls = 0;
    const authz = ctx.authorizer(P, { policyToken: async () => { calls += 1; return `svc-token-${calls}`; } });
    const token = mint(BASE, { app: ctx.app });
    const id = await authz.authenticate(`Bearer ${token}`);
    await authz.authorize(id, READ);
    await authz.authorize(id, READ);
    expect(calls).toBe(1);
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    await ctx.events.until('revalidated');
    expect(calls).toBe(2);
    expect(ctx.server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer svc-token-1', 'Bearer svc-token-2']);
    for (const r of ctx.server.requests) expect(JSON.stringify(r.headers)).not.toContain(token);
  });

  test('policyToken rejecting is a policy failure (503), and no request is made', async () => {
    const authz = ctx.authorizer(P, { policyToken: () => Promise.reject(new Error('vault down')) });
    const id = await identityFor(authz, ctx.app);
    const error = await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('network');
    expect(ctx.server.requests).toHaveLength(0);
  });

  test('the default policyUrl is ${baseUrl}/policy/v1/roles', async () => {
    const authz = ctx.authorizers.create({ baseUrl: ctx.server.url, localJwks: TEST_JWKS, now: ctx.clock.now, policy: P });
    const id = await authz.authenticate(`Bearer ${mint(ctx.server.url, { app: ctx.app })}`);
    expect((await authz.authorize(id, READ)).granted).toBe(true);
    expect(ctx.server.requests.map((r) => r.url)).toEqual(['/policy/v1/roles']);
  });

  test('policyUrl is used as given (path and query kept)', async () => {
    const authz = ctx.authorizer(P, { policyUrl: `${ctx.server.url}/custom/roles?v=1` });
    await authz.authorize(await identityFor(authz, ctx.app), READ);
    expect(ctx.server.requests.map((r) => r.url)).toEqual(['/custom/roles?v=1']);
  });
});

describe('check()', () => {
  test('resolves with the identity and the decision when granted', async () => {
    const authz = ctx.authorizer(P);
    const token = mint(BASE, { app: ctx.app });
    const { identity, decision } = await authz.check(`Bearer ${token}`, READ);
    expect(identity.claims.app).toBe(ctx.app);
    expect(decision).toMatchObject({ granted: true, reason: 'GRANTED', changeId: 'c1' });
  });

  test('throws 403 ERR_PERMISSION_DENIED carrying the decision when denied', async () => {
    const authz = ctx.authorizer(P);
    const token = mint(BASE, { app: ctx.app });
    const error = await expectAuthzError(authz.check(`Bearer ${token}`, WRITE), 'ERR_PERMISSION_DENIED', 403);
    if (!(error instanceof PermissionDeniedError)) throw new Error('expected a PermissionDeniedError');
    expect(error.decision).toEqual({ granted: false, reference: 'VIN=WVW1', roles: ['DRIVER'], changeId: 'c1', reason: 'PERMISSION_NOT_GRANTED' });
    expect(error.message).not.toContain(token);
    const other = await expectAuthzError(authz.check(`Bearer ${token}`, { ...READ, resource: { type: 'VIN', value: 'X' } }), 'ERR_PERMISSION_DENIED', 403);
    expect(other).toBeInstanceOf(PermissionDeniedError);
    expect(other).toMatchObject({ decision: { reason: 'NO_MATCHING_REFERENCE', roles: [], changeId: undefined } });
  });

  test('an invalid token is a 401 before any policy request', async () => {
    const authz = ctx.authorizer(P);
    await expectAuthzError(authz.check(undefined, READ), 'ERR_TOKEN_MISSING', 401);
    await expectAuthzError(authz.check('Bearer a.b.c', READ), 'ERR_TOKEN_INVALID', 401);
    expect(ctx.server.requests).toHaveLength(0);
  });

  test('no usable policy: 503, never 403 and never a grant', async () => {
    const authz = ctx.authorizer(P);
    ctx.server.fault = (req) => { req.socket.destroy(); return true; };
    await expectAuthzError(authz.check(`Bearer ${mint(BASE, { app: ctx.app })}`, READ), 'ERR_POLICY_UNAVAILABLE', 503);
  });
});
