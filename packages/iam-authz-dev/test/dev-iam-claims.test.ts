/**
 * Every claim and header parameter of an issued IAM token (spec §2.2), checked twice: with jose's
 * `jwtVerify` against the development IAM's JWKS, and with the library's own `createAuthorizer`.
 */
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer, type Authorizer } from 'iam-authz';
import { signJwt } from '../src/sign-jwt.js';
import { FORGER_KEY, TOKEN_REQUEST, corpToken, decodeSegment, idpToken, INLINE_ISSUER, INLINE_KEY, requestToken, send, startEnv, type Env } from './support.js';

let env: Env;
let jwks: JWTVerifyGetKey;
let authz: Authorizer;
beforeAll(async () => {
  env = await startEnv();
  jwks = createRemoteJWKSet(new URL(`${env.iam.baseUrl}/authentication/v1/.well-known/jwks.json`));
  authz = createAuthorizer({ baseUrl: env.iam.baseUrl });
});
afterAll(async () => {
  await authz.close();
  await env.close();
});

async function issue(subject: string, body: Record<string, unknown> = {}, idp = { token: corpToken(subject), key: 'corp' }): Promise<string> {
  const res = await requestToken(env.iam, { idpToken: idp.token, idpKey: idp.key, body: { ...TOKEN_REQUEST, ...body } });
  expect(res.status, res.body).toBe(200);
  return res.body;
}

async function publishedKids(): Promise<string[]> {
  const res = await send(`${env.iam.baseUrl}/authentication/v1/.well-known/jwks.json`);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('application/json');
  return (JSON.parse(res.body) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
}

describe('verified with jose against the JWKS', () => {
  test('the header is exactly { alg: RS256, kid, cty: t1 } and kid is in the JWKS', async () => {
    const token = await issue('alice');
    const { protectedHeader } = await jwtVerify(token, jwks, { algorithms: ['RS256'] });
    expect(protectedHeader).toStrictEqual({ alg: 'RS256', kid: expect.any(String), cty: 't1' });
    expect(await publishedKids()).toContain(protectedHeader.kid);
  });

  test('the claims are exactly those of §2.2, with the actor\'s values', async () => {
    const before = Math.floor(Date.now() / 1000);
    const token = await issue('alice');
    const after = Math.floor(Date.now() / 1000);
    const { payload } = await jwtVerify(token, jwks, { issuer: `${env.iam.baseUrl}/authentication/v1`, audience: 'tenant-1', algorithms: ['RS256'] });
    expect(payload).toStrictEqual({
      jti: expect.any(String),
      iss: `${env.iam.baseUrl}/authentication/v1`,
      sub: 'actor-alice',
      aud: 'tenant-1',
      exp: expect.any(Number),
      iat: expect.any(Number),
      acc: 'acc-1',
      app: 'app-1',
      tid: 'tenant-1',
      ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }],
    });
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    expect(payload.iat).toBeLessThanOrEqual(after);
    expect(Number.isInteger(payload.iat)).toBe(true);
    expect(Number.isInteger(payload.exp)).toBe(true);
  });

  test('iss is {baseUrl}/authentication/v1 and equals DevIam.issuer', async () => {
    const { payload } = await jwtVerify(await issue('alice'), jwks);
    expect(payload.iss).toBe(env.iam.issuer);
    expect(env.iam.issuer).toBe(`${env.iam.baseUrl}/authentication/v1`);
    expect(env.iam.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  test.each([1, 60, 3600, 86_400])('exp - iat equals expiryInSecs (%i)', async (expiryInSecs) => {
    const { payload } = await jwtVerify(await issue('alice', { expiryInSecs }), jwks);
    expect(payload.exp! - payload.iat!).toBe(expiryInSecs);
  });

  test('aud and tid are the requested tenant', async () => {
    const { payload } = await jwtVerify(await issue('bob', { tenantId: 'tenant-2' }), jwks, { audience: 'tenant-2' });
    expect(payload.aud).toBe('tenant-2');
    expect(payload.tid).toBe('tenant-2');
  });

  test('every token gets a fresh jti', async () => {
    const tokens = await Promise.all([issue('alice'), issue('alice'), issue('alice'), issue('bob')]);
    const jtis = tokens.map((t) => decodeSegment(t, 1).jti);
    for (const jti of jtis) expect(jti).toMatch(/^\S{8,}$/);
    expect(new Set(jtis).size).toBe(tokens.length);
  });

  test('ars are the actor\'s access references for that tenant only, n and c as configured', async () => {
    const { payload: t1 } = await jwtVerify(await issue('bob'), jwks);
    expect(t1.ars).toStrictEqual([{ r: ['OWNER'], c: ['VIN=WVW1'] }]);
    const { payload: t2 } = await jwtVerify(await issue('bob', { tenantId: 'tenant-2' }), jwks);
    expect(t2.ars).toStrictEqual([{ r: ['OWNER'], c: ['VIN=WVW2'] }, { r: ['DRIVER'], c: ['VIN=WVW3'], n: ['node-7'] }]);
  });

  test('acc and app are the actor\'s account and application', async () => {
    const { payload } = await jwtVerify(await issue('frank', { tenantId: 'tenant-9' }), jwks);
    expect(payload).toMatchObject({ sub: 'actor-frank', acc: 'acc-6', app: 'app-2', ars: [{ r: ['VIEWER'], n: ['fleet-1'] }] });
  });

  test('sub is the actor id, not the IdP subject (inline IdP)', async () => {
    const token = await issue('carol', {}, { token: idpToken(INLINE_KEY, INLINE_ISSUER, 'carol'), key: 'inline' });
    const { payload } = await jwtVerify(token, jwks);
    expect(payload.sub).toBe('actor-carol');
  });

  test('a token with the current kid but signed by another key does not verify against this JWKS', async () => {
    const genuine = await issue('alice');
    const kid = decodeSegment(genuine, 0).kid as string;
    const forged = signJwt(decodeSegment(genuine, 1), { ...FORGER_KEY, kid }, { cty: 't1' });
    await expect(jwtVerify(forged, jwks)).rejects.toThrow(/signature/);
    await expect(authz.authenticate(`Bearer ${forged}`)).rejects.toMatchObject({ status: 401, code: 'ERR_TOKEN_INVALID' });
  });
});

describe('verified with the library\'s createAuthorizer({ baseUrl })', () => {
  test('authenticate accepts an issued token and exposes its header and claims', async () => {
    const token = await issue('alice', { expiryInSecs: 120 });
    const id = await authz.authenticate(`Bearer ${token}`);
    expect(id.token).toBe(token);
    expect(id.header).toMatchObject({ alg: 'RS256', cty: 't1', kid: decodeSegment(token, 0).kid });
    expect(id.claims).toMatchObject({
      iss: env.iam.issuer, sub: 'actor-alice', aud: 'tenant-1', tid: 'tenant-1', acc: 'acc-1', app: 'app-1',
      jti: decodeSegment(token, 1).jti, ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'], n: [] }],
    });
    expect(id.claims.exp - id.claims.iat!).toBe(120);
  });

  test('an authorizer bound to another tenant (audience) refuses the token', async () => {
    const other = createAuthorizer({ baseUrl: env.iam.baseUrl, audience: 'tenant-2' });
    try {
      await expect(other.authenticate(`Bearer ${await issue('alice')}`)).rejects.toMatchObject({ status: 401, code: 'ERR_TOKEN_INVALID' });
    } finally {
      await other.close();
    }
  });

  test('authorize via the policy API: DRIVER reads, may not write; OWNER writes', async () => {
    const vin = { type: 'VIN', value: 'WVW1' };
    const alice = await authz.authenticate(`Bearer ${await issue('alice')}`);
    const read = await authz.authorize(alice, { service: 'vehicle-service', permission: 'READ', resource: vin });
    expect(read).toMatchObject({ granted: true, roles: ['DRIVER'], changeId: env.iam.policyOf('app-1')!.changeId });
    const write = await authz.authorize(alice, { service: 'vehicle-service', permission: 'WRITE', resource: vin });
    expect(write).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED' });
    const other = await authz.authorize(alice, { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW9' } });
    expect(other.granted).toBe(false);
    const bob = await authz.authenticate(`Bearer ${await issue('bob')}`);
    const bobWrite = await authz.check(`Bearer ${bob.token}`, { service: 'vehicle-service', permission: 'WRITE', resource: vin });
    expect(bobWrite.decision).toMatchObject({ granted: true, roles: ['OWNER'] });
  });

  test('a node reference in ars works through the policy API too', async () => {
    const bob = await authz.authenticate(`Bearer ${await issue('bob', { tenantId: 'tenant-2' })}`);
    const decision = await authz.authorize(bob, { service: 'vehicle-service', permission: 'READ', resource: { node: 'node-7' } });
    expect(decision).toMatchObject({ granted: true, roles: ['DRIVER'] });
    const write = await authz.authorize(bob, { service: 'vehicle-service', permission: 'WRITE', resource: { node: 'node-7' } });
    expect(write.granted).toBe(false);
  });
});
