/**
 * The development IAM's policy API (spec §2.3, §4.2), its JWKS and key rotation, `setConfig` and
 * `mintToken`.
 */
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer } from 'iam-authz';
import type { RolePolicy as ReadPolicy } from '../../../src/types.js';
import { DevIamConfigError } from '../src/config.js';
import type { RolePolicy } from '../src/index.js';
import { signJwt } from '../src/sign-jwt.js';
import { FORGER_KEY, TOKEN_REQUEST, corpToken, decodeSegment, exampleConfig, expectProblem, requestToken, send, startEnv, type Env, type RawResponse } from './support.js';

let env: Env;
beforeAll(async () => { env = await startEnv(); });
afterAll(async () => { await env.close(); });
// Tests below change the config; every test starts from the example.
afterEach(() => { env.iam.setConfig(exampleConfig(`${env.idp.url}/jwks.json`)); });

const policyUrl = (): string => `${env.iam.baseUrl}/policy/v1/roles`;
const jwksUrl = (): string => `${env.iam.baseUrl}/authentication/v1/.well-known/jwks.json`;

function getPolicy(token: string | undefined, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
  return send(policyUrl(), { method, headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers } });
}

async function issued(subject = 'alice', tenantId = 'tenant-1'): Promise<string> {
  const res = await requestToken(env.iam, { idpToken: corpToken(subject), body: { ...TOKEN_REQUEST, tenantId } });
  expect(res.status, res.body).toBe(200);
  return res.body;
}

async function jwks(): Promise<{ kid: string; [k: string]: unknown }[]> {
  const res = await send(jwksUrl());
  expect(res.status).toBe(200);
  return (JSON.parse(res.body) as { keys: { kid: string }[] }).keys;
}

const APP1_POLICY = {
  applicationId: 'app-1',
  changeId: expect.any(String),
  roles: [
    { key: 'DRIVER', servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: 'vehicle-service', permissions: [{ key: 'READ' }] }] },
    { key: 'OWNER', servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: 'vehicle-service', permissions: [{ key: 'READ' }, { key: 'WRITE' }] }] },
  ],
};

describe('GET /policy/v1/roles', () => {
  test('answers the role policy of the token\'s application (§2.3) with ETag "<changeId>"', async () => {
    const res = await getPolicy(await issued());
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const policy = JSON.parse(res.body) as { changeId: string };
    expect(policy).toStrictEqual(APP1_POLICY);
    expect(policy.changeId).toMatch(/^\S+$/);
    expect(res.headers.etag).toBe(`"${policy.changeId}"`);
    expect(env.iam.policyOf('app-1')).toStrictEqual(policy);
  });

  test('serves the document the library reads: the development kit\'s RolePolicy is the library\'s', async () => {
    // Written twice (the library reads it, the kit serves it): the type check keeps the two agreeing,
    // and an authorizer over the development IAM decides with what policyOf() returns.
    const served: RolePolicy | undefined = env.iam.policyOf('app-1');
    const read: ReadPolicy | undefined = served;
    expect(read?.roles.length).toBeGreaterThan(0);
    const authorizer = createAuthorizer({ baseUrl: env.iam.baseUrl });
    try {
      const identity = await authorizer.authenticate(`Bearer ${await issued()}`);
      const decision = await authorizer.authorize(identity, { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } });
      expect(decision.changeId).toBe(served?.changeId);
    } finally {
      await authorizer.close();
    }
  });

  test('another application\'s token gets that application\'s policy', async () => {
    const res = await getPolicy(await issued('frank', 'tenant-9'));
    expect(res.status).toBe(200);
    const policy = JSON.parse(res.body) as { changeId: string };
    expect(policy).toStrictEqual({
      applicationId: 'app-2', changeId: expect.any(String),
      roles: [{ key: 'VIEWER', servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: 'fleet-service', permissions: [{ key: 'LIST' }] }] }],
    });
    expect(policy.changeId).not.toBe(env.iam.policyOf('app-1')!.changeId);
  });

  test('a role without service permissions has servicePolicies []', async () => {
    const config = exampleConfig(`${env.idp.url}/jwks.json`);
    config.applications[0]!.roles.push({ key: 'GUEST', permissions: {} });
    env.iam.setConfig(config);
    const policy = JSON.parse((await getPolicy(await issued())).body) as { roles: unknown[] };
    expect(policy.roles[2]).toStrictEqual({ key: 'GUEST', servicePolicies: [] });
  });

  test('304 with the ETag and no body on a matching If-None-Match', async () => {
    const token = await issued();
    const etag = (await getPolicy(token)).headers.etag!;
    const res = await getPolicy(token, { 'if-none-match': etag });
    expect(res.status).toBe(304);
    expect(res.headers.etag).toBe(etag);
    expect(res.body).toBe('');
  });

  test.each([
    ['a list containing it', (etag: string) => `"other", ${etag}`],
    ['*', () => '*'],
    ['its weak form (If-None-Match compares weakly)', (etag: string) => `W/${etag}`],
  ])('304 for If-None-Match: %s', async (_name, value) => {
    const token = await issued();
    const etag = (await getPolicy(token)).headers.etag!;
    expect((await getPolicy(token, { 'if-none-match': value(etag) })).status).toBe(304);
  });

  test('200 with the body for a non-matching If-None-Match', async () => {
    const res = await getPolicy(await issued(), { 'if-none-match': '"stale"' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toStrictEqual(APP1_POLICY);
  });

  test('HEAD answers the ETag without a body', async () => {
    const res = await getPolicy(await issued(), {}, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(`"${env.iam.policyOf('app-1')!.changeId}"`);
    expect(res.body).toBe('');
  });

  test('401 without a token, with a Bearer challenge', async () => {
    const res = await getPolicy(undefined);
    expectProblem(res, 401, /IAM token/);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
  });

  test('401 for another authorization scheme', async () => {
    expectProblem(await getPolicy(undefined, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }), 401, /IAM token/);
  });

  test('401 for an expired IAM token', async () => {
    const past = Math.floor(Date.now() / 1000) - 60;
    expectProblem(await getPolicy(env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { iat: past - 3600, exp: past } })), 401, /IAM token/);
  });

  test('401 for a token of another issuer', async () => {
    expectProblem(await getPolicy(env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { iss: 'https://elsewhere.example/authentication/v1' } })), 401, /IAM token/);
  });

  test('401 for a token signed by a key that is not the IAM\'s', async () => {
    const genuine = env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
    const forged = signJwt(decodeSegment(genuine, 1), { ...FORGER_KEY, kid: decodeSegment(genuine, 0).kid as string }, { cty: 't1' });
    expectProblem(await getPolicy(forged), 401, /IAM token/);
  });

  test('401 for an IdP token in place of an IAM token', async () => {
    expectProblem(await getPolicy(corpToken('alice')), 401, /IAM token/);
  });

  test('404 when the token\'s application is not configured', async () => {
    expectProblem(await getPolicy(env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { app: 'app-unknown' } })), 404, /application/);
  });

  test('405 for POST', async () => {
    const res = await getPolicy(await issued(), {}, 'POST');
    expectProblem(res, 405, /GET/);
    expect(res.headers.allow).toBe('GET, HEAD');
  });
});

describe('setConfig and changeId', () => {
  test('changed roles → a new changeId (API, ETag and policyOf); other applications keep theirs', async () => {
    const token = await issued();
    const before = await getPolicy(token);
    const app2Before = env.iam.policyOf('app-2')!.changeId;
    const config = exampleConfig(`${env.idp.url}/jwks.json`);
    config.applications[0]!.roles[0]!.permissions['vehicle-service'] = ['READ', 'WRITE'];
    env.iam.setConfig(config);
    const after = await getPolicy(token, { 'if-none-match': before.headers.etag! });
    expect(after.status).toBe(200);
    const policy = JSON.parse(after.body) as { changeId: string; roles: { key: string; servicePolicies: { permissions: unknown }[] }[] };
    expect(policy.changeId).not.toBe((JSON.parse(before.body) as { changeId: string }).changeId);
    expect(after.headers.etag).toBe(`"${policy.changeId}"`);
    expect(policy.roles[0]!.servicePolicies[0]!.permissions).toStrictEqual([{ key: 'READ' }, { key: 'WRITE' }]);
    expect(env.iam.policyOf('app-1')!.changeId).toBe(policy.changeId);
    expect(env.iam.policyOf('app-2')!.changeId).toBe(app2Before);
  });

  test('a new role → a new changeId', () => {
    const before = env.iam.policyOf('app-1')!.changeId;
    const config = exampleConfig(`${env.idp.url}/jwks.json`);
    config.applications[0]!.roles.push({ key: 'MECHANIC', permissions: { 'vehicle-service': ['READ'] } });
    env.iam.setConfig(config);
    expect(env.iam.policyOf('app-1')!.changeId).not.toBe(before);
  });

  test('an unchanged config (a fresh copy) keeps the changeId, and If-None-Match still matches', async () => {
    const token = await issued();
    const etag = (await getPolicy(token)).headers.etag!;
    env.iam.setConfig(exampleConfig(`${env.idp.url}/jwks.json`));
    expect(`"${env.iam.policyOf('app-1')!.changeId}"`).toBe(etag);
    expect((await getPolicy(token, { 'if-none-match': etag })).status).toBe(304);
  });

  test('changes to actors only keep the changeId', () => {
    const before = env.iam.policyOf('app-1')!.changeId;
    const config = exampleConfig(`${env.idp.url}/jwks.json`);
    config.actors.pop();
    config.actors[0]!.tenants['tenant-3'] = [{ r: ['OWNER'], c: ['VIN=X'] }];
    env.iam.setConfig(config);
    expect(env.iam.policyOf('app-1')!.changeId).toBe(before);
  });

  test('actors and IdPs of the new config take effect for token requests', async () => {
    const config = exampleConfig(`${env.idp.url}/jwks.json`);
    config.actors = config.actors.filter((a) => a.id !== 'actor-alice');
    config.actors.push({ id: 'actor-mallory', idp: 'corp', subject: 'mallory', account: 'acc-9', application: 'app-1', tenants: { 'tenant-1': [{ r: ['DRIVER'], c: ['VIN=M'] }] } });
    env.iam.setConfig(config);
    expectProblem(await requestToken(env.iam, { idpToken: corpToken('alice') }), 403, /not an actor/);
    const res = await requestToken(env.iam, { idpToken: corpToken('mallory') });
    expect(res.status).toBe(200);
    expect(decodeSegment(res.body, 1)).toMatchObject({ sub: 'actor-mallory', ars: [{ r: ['DRIVER'], c: ['VIN=M'] }] });
  });

  test('an invalid config throws DevIamConfigError and the previous one stays in force', async () => {
    const before = env.iam.policyOf('app-1');
    const config = exampleConfig(`${env.idp.url}/jwks.json`);
    config.actors[0]!.idp = 'nope';
    config.applications[0]!.roles = [];
    expect(() => { env.iam.setConfig(config); }).toThrow(DevIamConfigError);
    expect(env.iam.policyOf('app-1')).toStrictEqual(before);
    expect((await requestToken(env.iam)).status).toBe(200);
  });

  test('policyOf is undefined for an unknown application', () => {
    expect(env.iam.policyOf('app-unknown')).toBeUndefined();
  });
});

describe('JWKS and rotateKeys', () => {
  test('the JWKS publishes public RSA keys only', async () => {
    const keys = await jwks();
    expect(keys.length).toBeGreaterThanOrEqual(1);
    for (const key of keys) {
      expect(Object.keys(key).sort()).toStrictEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    }
  });

  test('405 for POST to the JWKS', async () => {
    expectProblem(await send(jwksUrl(), { method: 'POST' }), 405, /GET/);
  });

  test('rotateKeys: new kid signs, the previous stays published, the one before is dropped', async () => {
    const k0 = decodeSegment(await issued(), 0).kid as string;
    const t0 = await issued();
    expect((await jwks()).map((k) => k.kid)).toContain(k0);

    const k1 = env.iam.rotateKeys();
    expect(k1).not.toBe(k0);
    expect((await jwks()).map((k) => k.kid)).toStrictEqual([k1, k0]);
    const t1 = await issued();
    expect(decodeSegment(t1, 0).kid).toBe(k1);
    expect(decodeSegment(env.iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' }), 0).kid).toBe(k1);
    // Tokens signed before the rotation still verify, at the policy API and against the JWKS.
    expect((await getPolicy(t0)).status).toBe(200);
    const set1 = createLocalJWKSet({ keys: await jwks() });
    await expect(jwtVerify(t0, set1)).resolves.toBeDefined();
    await expect(jwtVerify(t1, set1)).resolves.toBeDefined();

    const k2 = env.iam.rotateKeys();
    expect(new Set([k0, k1, k2]).size).toBe(3);
    expect((await jwks()).map((k) => k.kid)).toStrictEqual([k2, k1]);
    expectProblem(await getPolicy(t0), 401, /IAM token/);
    expect((await getPolicy(t1)).status).toBe(200);
    const set2 = createLocalJWKSet({ keys: await jwks() });
    await expect(jwtVerify(t0, set2)).rejects.toThrow();
    await expect(jwtVerify(t1, set2)).resolves.toBeDefined();
  });
});

describe('mintToken', () => {
  const authorizer = (): ReturnType<typeof createAuthorizer> => createAuthorizer({ baseUrl: env.iam.baseUrl, tokenCache: false });

  test('signs a token like the token endpoint\'s, with the actor\'s ars for the tenant', async () => {
    const authz = authorizer();
    try {
      const token = env.iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-2', expiryInSecs: 90 });
      expect(decodeSegment(token, 0)).toStrictEqual({ alg: 'RS256', kid: expect.any(String), cty: 't1' });
      const id = await authz.authenticate(`Bearer ${token}`);
      expect(id.claims).toMatchObject({ iss: env.iam.issuer, sub: 'actor-bob', aud: 'tenant-2', tid: 'tenant-2', acc: 'acc-2', app: 'app-1' });
      expect(id.claims.ars).toStrictEqual([{ r: ['OWNER'], c: ['VIN=WVW2'], n: [] }, { r: ['DRIVER'], c: ['VIN=WVW3'], n: ['node-7'] }]);
      expect(id.claims.exp - id.claims.iat!).toBe(90);
      expect(decodeSegment(env.iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-2' }), 1).jti).not.toBe(id.claims.jti);
    } finally {
      await authz.close();
    }
  });

  test('defaults to one hour and to ars [] for a tenant the actor has no access to', () => {
    const claims = decodeSegment(env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-7' }), 1) as { exp: number; iat: number; ars: unknown };
    expect(claims.exp - claims.iat).toBe(3600);
    expect(claims.ars).toStrictEqual([]);
  });

  test('ars override', () => {
    const ars = [{ r: ['OWNER'], c: ['VIN=ZZZ'] }];
    expect(decodeSegment(env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', ars }), 1).ars).toStrictEqual(ars);
  });

  test('claims override: a past exp gives an expired token the authorizer refuses', async () => {
    const authz = authorizer();
    try {
      const now = Math.floor(Date.now() / 1000);
      const token = env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { iat: now - 7200, exp: now - 3600 } });
      expect(decodeSegment(token, 1)).toMatchObject({ iat: now - 7200, exp: now - 3600 });
      await expect(authz.authenticate(`Bearer ${token}`)).rejects.toMatchObject({ status: 401, code: 'ERR_TOKEN_EXPIRED' });
      await expect(jwtVerify(token, createLocalJWKSet({ keys: await jwks() }))).rejects.toMatchObject({ code: 'ERR_JWT_EXPIRED' });
    } finally {
      await authz.close();
    }
  });

  test('header override: another cty or an unknown kid is refused by the authorizer', async () => {
    const authz = authorizer();
    try {
      const t2 = env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', header: { cty: 't2' } });
      expect(decodeSegment(t2, 0)).toMatchObject({ cty: 't2', alg: 'RS256' });
      await expect(authz.authenticate(`Bearer ${t2}`)).rejects.toMatchObject({ status: 401, code: 'ERR_TOKEN_INVALID' });
      const unknownKid = env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', header: { kid: 'no-such-kid' } });
      expect(decodeSegment(unknownKid, 0).kid).toBe('no-such-kid');
      await expect(authz.authenticate(`Bearer ${unknownKid}`)).rejects.toMatchObject({ status: 401 });
      // The untouched token verifies with the same authorizer: the refusals are the overrides' doing.
      await expect(authz.authenticate(`Bearer ${env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' })}`)).resolves.toBeDefined();
    } finally {
      await authz.close();
    }
  });

  test('an unknown actor is a TypeError', () => {
    expect(() => env.iam.mintToken({ actor: 'actor-nobody', tenantId: 'tenant-1' })).toThrow(/actor-nobody/);
    expect(() => env.iam.mintToken({ actor: 'actor-nobody', tenantId: 'tenant-1' })).toThrow(TypeError);
  });
});
