/**
 * The development IAM's token endpoint (spec §4.1): every header and body rule, the IdP variants
 * (jwksUri, inline jwks, audience, built-in) and the refusals of bad IdP tokens.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEV_IDP_AUDIENCE, MAX_EXPIRY_SEC, startDevIam } from '../src/dev-iam.js';
import { signJwt } from '../src/sign-jwt.js';
import {
  AUD_AUDIENCE, AUD_ISSUER, AUD_KEY, CORP_ISSUER, CORP_KEY, FORGER_KEY, INLINE_ISSUER, INLINE_KEY, TOKEN_REQUEST,
  corpToken, decodeSegment, exampleConfig, expectProblem, idpToken, requestToken, send, startEnv, startIdpJwksServer, type Env, type RawResponse,
} from './support.js';

let env: Env;
beforeAll(async () => { env = await startEnv(); });
afterAll(async () => { await env.close(); });

function expectJwt(res: RawResponse): string {
  expect(res.status, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('application/jwt');
  expect(res.body).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  return res.body;
}

describe('a valid request', () => {
  test('answers 200 with the bare JWT as application/jwt, not wrapped in JSON', async () => {
    const token = expectJwt(await requestToken(env.iam));
    expect(decodeSegment(token, 1)).toMatchObject({ sub: 'actor-alice', aud: 'tenant-1' });
    expect(token.trim()).toBe(token);
  });

  test('the answer is not cacheable (cache-control: no-store)', async () => {
    expect((await requestToken(env.iam)).headers['cache-control']).toBe('no-store');
  });

  test('accepts "bearer" in any case and a content-type with a charset', async () => {
    const res = await requestToken(env.iam, { headers: { authorization: `bEaReR ${corpToken('alice')}`, 'content-type': 'Application/JSON; charset=utf-8' } });
    expectJwt(res);
  });

  test.each(['application/json, application/jwt;q=0.5', 'text/plain;q=0.1, APPLICATION/JWT', '*/*, application/jwt'])('accepts accept: %s', async (accept) => {
    expectJwt(await requestToken(env.iam, { headers: { accept } }));
  });

  test('does not require the reference client\'s cache-control and if-modified-since', async () => {
    expectJwt(await requestToken(env.iam, { headers: { 'cache-control': null, 'if-modified-since': null } }));
  });

  test.each([1, MAX_EXPIRY_SEC])('accepts expiryInSecs %i (the bounds)', async (expiryInSecs) => {
    const token = expectJwt(await requestToken(env.iam, { body: { ...TOKEN_REQUEST, expiryInSecs } }));
    const { exp, iat } = decodeSegment(token, 1) as { exp: number; iat: number };
    expect(exp - iat).toBe(expiryInSecs);
  });
});

describe('header rules', () => {
  test.each(['GET', 'PUT', 'DELETE'])('405 for %s, with allow: POST', async (method) => {
    const res = await requestToken(env.iam, { method });
    expectProblem(res, 405, /POST/);
    expect(res.headers.allow).toBe('POST');
  });

  test('415 without content-type', async () => {
    expectProblem(await requestToken(env.iam, { headers: { 'content-type': null } }), 415, /application\/json/);
  });

  test.each(['text/plain', 'application/x-www-form-urlencoded', 'application/jsonp'])('415 for content-type %s', async (contentType) => {
    expectProblem(await requestToken(env.iam, { headers: { 'content-type': contentType } }), 415, /content-type/);
  });

  test('406 without accept', async () => {
    expectProblem(await requestToken(env.iam, { headers: { accept: null } }), 406, /application\/jwt/);
  });

  // Spec §4.1 requires the caller to name application/jwt: a wildcard alone does not say it takes a JWT.
  test.each(['application/json', 'text/*', '*/*', 'application/*', 'application/jwt;q=0', 'application/jwt;q=0, application/json'])('406 for accept: %s', async (accept) => {
    expectProblem(await requestToken(env.iam, { headers: { accept } }), 406, /accept/);
  });

  test('401 without authorization, with a Bearer challenge', async () => {
    const res = await requestToken(env.iam, { headers: { authorization: null } });
    expectProblem(res, 401, /Bearer/);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
  });

  test.each(['Basic YWxpY2U6c2VjcmV0', 'Bearer', 'Bearer ', 'Token abc.def.ghi', 'Bearer a b'])('401 for authorization: %j', async (authorization) => {
    expectProblem(await requestToken(env.iam, { headers: { authorization } }), 401, /Bearer/);
  });

  test('400 without idp-key', async () => {
    expectProblem(await requestToken(env.iam, { headers: { 'idp-key': null } }), 400, /idp-key/);
  });

  test('400 for an empty idp-key', async () => {
    expectProblem(await requestToken(env.iam, { headers: { 'idp-key': '' } }), 400, /idp-key/);
  });

  test('400 for an unknown idp-key, naming it', async () => {
    expectProblem(await requestToken(env.iam, { idpKey: 'nope' }), 400, /"nope"/);
  });
});

describe('body rules', () => {
  test.each([
    ['not JSON', '{tenantId: tenant-1}'],
    ['empty', ''],
    ['truncated', '{"tenantId":"tenant-1",'],
  ])('400 for a body that is %s', async (_name, rawBody) => {
    expectProblem(await requestToken(env.iam, { rawBody }), 400, /not valid JSON/);
  });

  test.each([['an array', []], ['null', null], ['a string', 'tenant-1'], ['a number', 3600]])('400 for a body that is %s', async (_name, body) => {
    expectProblem(await requestToken(env.iam, { rawBody: JSON.stringify(body) }), 400, /JSON object/);
  });

  test.each([
    ['missing', { expiryInSecs: 3600, tokenFormat: 't1' }],
    ['empty', { ...TOKEN_REQUEST, tenantId: '' }],
    ['a number', { ...TOKEN_REQUEST, tenantId: 1 }],
    ['an array', { ...TOKEN_REQUEST, tenantId: ['tenant-1'] }],
  ])('400 when tenantId is %s', async (_name, body) => {
    expectProblem(await requestToken(env.iam, { body }), 400, /"tenantId"/);
  });

  test.each([
    ['missing', { tenantId: 'tenant-1', tokenFormat: 't1' }],
    ['0', { ...TOKEN_REQUEST, expiryInSecs: 0 }],
    ['negative', { ...TOKEN_REQUEST, expiryInSecs: -60 }],
    ['fractional', { ...TOKEN_REQUEST, expiryInSecs: 1.5 }],
    ['above the bound', { ...TOKEN_REQUEST, expiryInSecs: MAX_EXPIRY_SEC + 1 }],
    ['a numeric string', { ...TOKEN_REQUEST, expiryInSecs: '3600' }],
    ['null', { ...TOKEN_REQUEST, expiryInSecs: null }],
    ['a boolean', { ...TOKEN_REQUEST, expiryInSecs: true }],
  ])('400 when expiryInSecs is %s', async (_name, body) => {
    expectProblem(await requestToken(env.iam, { body }), 400, new RegExp(`"expiryInSecs" must be an integer from 1 to ${MAX_EXPIRY_SEC}`));
  });

  test.each([
    ['missing', { tenantId: 'tenant-1', expiryInSecs: 3600 }],
    ['"t2"', { ...TOKEN_REQUEST, tokenFormat: 't2' }],
    ['"T1" (case matters)', { ...TOKEN_REQUEST, tokenFormat: 'T1' }],
    ['empty', { ...TOKEN_REQUEST, tokenFormat: '' }],
  ])('400 when tokenFormat is %s', async (_name, body) => {
    expectProblem(await requestToken(env.iam, { body }), 400, /"tokenFormat" must be "t1"/);
  });

  test('413 for a body over 16 KiB', async () => {
    const body = { ...TOKEN_REQUEST, padding: 'x'.repeat(16 * 1024) };
    expectProblem(await requestToken(env.iam, { body }), 413, /16384/);
  });

  test('413 for a large body too, and the server keeps serving', async () => {
    const body = { ...TOKEN_REQUEST, padding: 'x'.repeat(1024 * 1024) };
    expectProblem(await requestToken(env.iam, { body }), 413, /16384/);
    expectJwt(await requestToken(env.iam));
  });

  test('a body of exactly 16 KiB is read', async () => {
    const base = JSON.stringify({ ...TOKEN_REQUEST, padding: '' });
    const body = { ...TOKEN_REQUEST, padding: 'x'.repeat(16 * 1024 - base.length) };
    expect(Buffer.byteLength(JSON.stringify(body))).toBe(16 * 1024);
    expectJwt(await requestToken(env.iam, { body }));
  });

  test('unknown body fields are ignored', async () => {
    expectJwt(await requestToken(env.iam, { body: { ...TOKEN_REQUEST, scope: 'everything' } }));
  });
});

describe('the IdP token', () => {
  test('is verified against the jwksUri of the IdP entry, fetched from a separate server', async () => {
    const idp = await startIdpJwksServer();
    const iam = await startDevIam({ config: exampleConfig(`${idp.url}/jwks.json`) });
    try {
      expect(idp.hits).toBe(0);
      const token = expectJwt(await requestToken(iam, { idpToken: corpToken('bob') }));
      expect(decodeSegment(token, 1).sub).toBe('actor-bob');
      expect(idp.hits).toBeGreaterThanOrEqual(1);
    } finally {
      await iam.close();
      await idp.close();
    }
  });

  test('401 when the jwksUri does not publish the signing key', async () => {
    const idp = await startIdpJwksServer([AUD_KEY]);
    const iam = await startDevIam({ config: exampleConfig(`${idp.url}/jwks.json`) });
    try {
      expectProblem(await requestToken(iam, { idpToken: corpToken('alice') }), 401, /IdP token is not valid/);
      expect(idp.hits).toBeGreaterThanOrEqual(1);
    } finally {
      await iam.close();
      await idp.close();
    }
  });

  test('401 for a forged IdP token (same kid, another key)', async () => {
    const forged = idpToken(FORGER_KEY, CORP_ISSUER, 'alice');
    expectProblem(await requestToken(env.iam, { idpToken: forged }), 401, /IdP token is not valid/);
  });

  test('401 for an IdP token with a tampered payload', async () => {
    const [h, , s] = corpToken('alice').split('.');
    const tampered = `${h!}.${Buffer.from(JSON.stringify({ iss: CORP_ISSUER, sub: 'bob', exp: 9_999_999_999 })).toString('base64url')}.${s!}`;
    expectProblem(await requestToken(env.iam, { idpToken: tampered }), 401, /IdP token is not valid/);
  });

  test('401 for an expired IdP token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = corpToken('alice', { iat: now - 7200, exp: now - 3600 });
    const res = await requestToken(env.iam, { idpToken: expired });
    expectProblem(res, 401, /IdP token is not valid/);
    expect(res.headers['www-authenticate']).toMatch(/invalid_token/);
  });

  test('401 for an IdP token without exp: an IdP token must expire', async () => {
    const res = await requestToken(env.iam, { idpToken: corpToken('alice', { exp: undefined }) });
    expectProblem(res, 401, /IdP token is not valid/);
  });

  test('401 for an IdP token not valid yet (nbf in the future)', async () => {
    const early = corpToken('alice', { nbf: Math.floor(Date.now() / 1000) + 3600 });
    expectProblem(await requestToken(env.iam, { idpToken: early }), 401, /IdP token is not valid/);
  });

  test('401 for an IdP token from the wrong issuer', async () => {
    expectProblem(await requestToken(env.iam, { idpToken: idpToken(CORP_KEY, 'https://evil.example', 'alice') }), 401, /IdP token is not valid/);
  });

  test('401 for a token of another IdP presented under this idp-key (issuer and key differ)', async () => {
    const inline = idpToken(INLINE_KEY, INLINE_ISSUER, 'alice');
    expectProblem(await requestToken(env.iam, { idpToken: inline, idpKey: 'corp' }), 401, /IdP token is not valid/);
  });

  test('401 for an unsigned (alg none) IdP token', async () => {
    const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const none = `${b64({ alg: 'none' })}.${b64({ iss: CORP_ISSUER, sub: 'alice', iat: now, exp: now + 60 })}.`;
    expectProblem(await requestToken(env.iam, { headers: { authorization: `Bearer ${none}` } }), 401, /IdP token is not valid/);
  });

  test('401 for garbage in place of a JWT', async () => {
    expectProblem(await requestToken(env.iam, { idpToken: 'not-a-jwt' }), 401, /IdP token is not valid/);
  });

  test('an inline jwks IdP entry verifies without any network', async () => {
    const token = expectJwt(await requestToken(env.iam, { idpToken: idpToken(INLINE_KEY, INLINE_ISSUER, 'carol'), idpKey: 'inline' }));
    expect(decodeSegment(token, 1).sub).toBe('actor-carol');
  });

  test('an inline jwks IdP entry refuses a token signed by a key not in it', async () => {
    const res = await requestToken(env.iam, { idpToken: idpToken(CORP_KEY, INLINE_ISSUER, 'carol'), idpKey: 'inline' });
    expectProblem(res, 401, /IdP token is not valid/);
  });

  describe('an IdP entry with an audience', () => {
    test('accepts a token for that audience (string or within an array)', async () => {
      for (const aud of [AUD_AUDIENCE, ['other', AUD_AUDIENCE]]) {
        const token = expectJwt(await requestToken(env.iam, { idpToken: idpToken(AUD_KEY, AUD_ISSUER, 'dave', { aud }), idpKey: 'aud' }));
        expect(decodeSegment(token, 1).sub).toBe('actor-dave');
      }
    });

    test('401 for another audience', async () => {
      const res = await requestToken(env.iam, { idpToken: idpToken(AUD_KEY, AUD_ISSUER, 'dave', { aud: 'someone-else' }), idpKey: 'aud' });
      expectProblem(res, 401, /IdP token is not valid/);
    });

    test('401 for a token without aud', async () => {
      expectProblem(await requestToken(env.iam, { idpToken: idpToken(AUD_KEY, AUD_ISSUER, 'dave'), idpKey: 'aud' }), 401, /IdP token is not valid/);
    });
  });

  test('an IdP entry without audience accepts any aud', async () => {
    expectJwt(await requestToken(env.iam, { idpToken: corpToken('alice', { aud: 'whatever' }) }));
  });
});

describe('subject and tenant', () => {
  test('403 when the IdP subject is not mapped to an actor', async () => {
    expectProblem(await requestToken(env.iam, { idpToken: corpToken('mallory') }), 403, /not an actor/);
  });

  test('403 for an IdP token without sub', async () => {
    expectProblem(await requestToken(env.iam, { idpToken: corpToken('alice', { sub: undefined }) }), 403, /not an actor/);
  });

  test('the subject mapping is per IdP: "carol" of the corp IdP is nobody', async () => {
    expectProblem(await requestToken(env.iam, { idpToken: corpToken('carol') }), 403, /not an actor/);
  });

  test('403 when the actor has no access to the tenant', async () => {
    const res = await requestToken(env.iam, { body: { ...TOKEN_REQUEST, tenantId: 'tenant-2' } });
    expectProblem(res, 403, /tenant/);
  });

  test.each(['__proto__', 'constructor', 'toString'])('403 for tenant %j (no prototype lookups)', async (tenantId) => {
    expectProblem(await requestToken(env.iam, { body: { ...TOKEN_REQUEST, tenantId } }), 403, /tenant/);
  });

  test('the same actor gets a token for each tenant it has access to', async () => {
    for (const tenantId of ['tenant-1', 'tenant-2']) {
      const token = expectJwt(await requestToken(env.iam, { idpToken: corpToken('bob'), body: { ...TOKEN_REQUEST, tenantId } }));
      expect(decodeSegment(token, 1)).toMatchObject({ sub: 'actor-bob', aud: tenantId, tid: tenantId });
    }
  });
});

describe('the built-in IdP', () => {
  const devToken = async (subject: unknown): Promise<RawResponse> =>
    send(`${env.iam.baseUrl}/dev-idp/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ subject }) });

  test('POST /dev-idp/token → an IdP token as application/jwt, which the token endpoint exchanges', async () => {
    const res = await devToken('alice');
    const idp = expectJwt(res);
    const claims = decodeSegment(idp, 1);
    expect(claims).toMatchObject({ sub: 'alice', iss: `${env.iam.baseUrl}/dev-idp`, aud: DEV_IDP_AUDIENCE });
    const token = expectJwt(await requestToken(env.iam, { idpToken: idp, idpKey: 'dev' }));
    // "alice" of the built-in IdP maps to its own actor, not to the corp IdP's alice.
    expect(decodeSegment(token, 1)).toMatchObject({ sub: 'actor-dev-alice', acc: 'acc-5' });
  });

  test('mintIdpToken signs the same kind of IdP token', async () => {
    expectJwt(await requestToken(env.iam, { idpToken: env.iam.mintIdpToken('alice'), idpKey: 'dev' }));
  });

  test('a built-in IdP token is refused under an external idp-key, and a corp token under "dev"', async () => {
    expectProblem(await requestToken(env.iam, { idpToken: env.iam.mintIdpToken('alice'), idpKey: 'corp' }), 401, /IdP token is not valid/);
    expectProblem(await requestToken(env.iam, { idpToken: corpToken('alice'), idpKey: 'dev' }), 401, /IdP token is not valid/);
  });

  test('a forged or expired built-in IdP token is refused', async () => {
    const forged = signJwt({ iss: `${env.iam.baseUrl}/dev-idp`, sub: 'alice', aud: DEV_IDP_AUDIENCE, exp: Math.floor(Date.now() / 1000) - 60 }, FORGER_KEY);
    expectProblem(await requestToken(env.iam, { idpToken: forged, idpKey: 'dev' }), 401, /IdP token is not valid/);
    expectProblem(await requestToken(env.iam, { idpToken: env.iam.mintIdpToken('alice', -60), idpKey: 'dev' }), 401, /IdP token is not valid/);
  });

  test('an unknown subject gets an IdP token but no IAM token (403)', async () => {
    const idp = expectJwt(await devToken('nobody'));
    expectProblem(await requestToken(env.iam, { idpToken: idp, idpKey: 'dev' }), 403, /not an actor/);
  });

  test.each([['missing', undefined], ['empty', ''], ['a number', 7]])('400 when subject is %s', async (_name, subject) => {
    expectProblem(await devToken(subject), 400, /subject/);
  });

  test('without a builtin IdP entry there is no /dev-idp/token (404)', async () => {
    const config = exampleConfig(`${env.idp.url}/jwks.json`);
    config.idps = config.idps.filter((i) => i.key !== 'dev');
    config.actors = config.actors.filter((a) => a.idp !== 'dev');
    const idp = env.iam.mintIdpToken('alice');
    env.iam.setConfig(config);
    try {
      expectProblem(await devToken('alice'), 404, /no such endpoint/);
      expectProblem(await requestToken(env.iam, { idpToken: idp, idpKey: 'dev' }), 400, /"dev"/);
    } finally {
      env.iam.setConfig(exampleConfig(`${env.idp.url}/jwks.json`));
    }
  });

  test('400 for a body that is not JSON, 405 for GET', async () => {
    const bad = await send(`${env.iam.baseUrl}/dev-idp/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expectProblem(bad, 400, /JSON/);
    expectProblem(await send(`${env.iam.baseUrl}/dev-idp/token`), 405, /POST/);
  });
});

test('404 problem for an unknown path', async () => {
  expectProblem(await send(`${env.iam.baseUrl}/authentication/v2/tokens`, { method: 'POST' }), 404, /no such endpoint/);
});
