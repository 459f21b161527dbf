/** Rule "Claims": issuer, exp/nbf with the clock tolerance, cty, tid = aud, audience, sub and app. */
import { afterAll, describe, expect, test } from 'vitest';
import { Clock, KEY, KEY2, NOW_MS, NOW_SEC } from '../helpers/index.js';
import { Authorizers, baseClaims, BASE, expectAccepted, expectRefused, iamHeader, ISSUER, signObjects, signRaw, token } from './support.js';

const authorizers = new Authorizers();
afterAll(() => authorizers.closeAll());

/** A token whose payload JSON is written by hand from the valid claims, with `exp` replaced by `expJson`. */
function tokenWithRawExp(expJson: string): string {
  const json = JSON.stringify(baseClaims({ exp: 0 }));
  expect(json).toContain('"exp":0,');
  return signRaw(JSON.stringify(iamHeader()), json.replace('"exp":0,', `"exp":${expJson},`));
}

describe('issuer', () => {
  test('control: the issuer derived from baseUrl is accepted', async () => {
    await expectAccepted(authorizers.static(), token({ iss: `${BASE}/authentication/v1` }));
  });

  test.each([
    ['another IAM', 'https://evil.example.test/authentication/v1'],
    ['a trailing slash', `${ISSUER}/`],
    ['another version', `${BASE}/authentication/v2`],
    ['the base URL only', BASE],
    ['upper-case host', ISSUER.replace('iam.example.test', 'IAM.EXAMPLE.TEST')],
    ['http instead of https', ISSUER.replace('https:', 'http:')],
    ['surrounding whitespace', ` ${ISSUER}`],
    ['a prefix of the issuer', ISSUER.slice(0, -1)],
  ])('an issuer with %s is ERR_TOKEN_INVALID', async (_label, iss) => {
    await expectRefused(authorizers.static(), token({ iss }), 'ERR_TOKEN_INVALID');
  });

  test.each<[string, unknown]>([
    ['missing', undefined],
    ['an array holding the issuer', [ISSUER]],
    ['null', null],
  ])('an iss that is %s is ERR_TOKEN_INVALID', async (_label, iss) => {
    await expectRefused(authorizers.static(), token({ iss }), 'ERR_TOKEN_INVALID');
  });

  test('an explicit issuer option replaces the derived one', async () => {
    const authz = authorizers.create({ issuer: 'urn:example:iam', localJwks: { keys: [KEY.jwk] }, now: () => NOW_MS });
    await expectAccepted(authz, token({ iss: 'urn:example:iam' }));
    await expectRefused(authz, token(), 'ERR_TOKEN_INVALID');
  });
});

describe('exp', () => {
  test('a token whose exp has passed is ERR_TOKEN_EXPIRED (401)', async () => {
    await expectRefused(authorizers.static(), token({ exp: NOW_SEC - 3600, iat: NOW_SEC - 7200 }), 'ERR_TOKEN_EXPIRED');
  });

  test('a negative exp is ERR_TOKEN_EXPIRED', async () => {
    await expectRefused(authorizers.static(), token({ exp: -1 }), 'ERR_TOKEN_EXPIRED');
  });

  test.each<[string, unknown]>([
    ['missing', undefined],
    ['a numeric string', String(NOW_SEC + 3600)],
    ['a fraction', NOW_SEC + 3600.5],
    ['null', null],
    ['true', true],
    ['beyond 2^53', 2 ** 53],
    ['an array', [NOW_SEC + 3600]],
  ])('an exp that is %s is ERR_TOKEN_INVALID', async (_label, exp) => {
    await expectRefused(authorizers.static(), token({ exp }), 'ERR_TOKEN_INVALID');
  });

  test.each(['1e400', '-1e400', '1E400', `"${NOW_SEC + 3600}"`])('an exp written by hand as %s is ERR_TOKEN_INVALID', async (raw) => {
    const authz = authorizers.static();
    await expectAccepted(authz, tokenWithRawExp(String(NOW_SEC + 3600)));
    await expectRefused(authz, tokenWithRawExp(raw), 'ERR_TOKEN_INVALID');
  });

  test('an exp written as exponent notation of an integer is accepted (it is a JSON integer value)', async () => {
    // 1.8e9 is the integer 1800000000 (well after NOW); JSON does not distinguish spellings of a number.
    const authz = authorizers.static();
    expect(Number('1.8e9')).toBeGreaterThan(NOW_SEC);
    await expectAccepted(authz, tokenWithRawExp('1.8e9'));
  });
});

describe('clock tolerance (default 5 s) on exp and nbf', () => {
  test('default: exp 4 s ago is accepted, exp 5 s ago is ERR_TOKEN_EXPIRED', async () => {
    const authz = authorizers.static({ tokenCache: false });
    await expectAccepted(authz, token({ exp: NOW_SEC - 4 }));
    await expectRefused(authz, token({ exp: NOW_SEC - 5 }), 'ERR_TOKEN_EXPIRED');
  });

  test('default: a token is accepted until 5 s after exp as the injected clock advances', async () => {
    const clock = new Clock();
    const authz = authorizers.static({ tokenCache: false, now: clock.now });
    const t = token({ exp: NOW_SEC + 60 });
    clock.advance(60_000 + 4_999);
    await expectAccepted(authz, t);
    clock.advance(1);
    await expectRefused(authz, t, 'ERR_TOKEN_EXPIRED');
  });

  test('clockToleranceSec: 0 refuses a token at its exp second and accepts one a second before', async () => {
    const clock = new Clock();
    const authz = authorizers.static({ clockToleranceSec: 0, tokenCache: false, now: clock.now });
    await expectRefused(authz, token({ exp: NOW_SEC }), 'ERR_TOKEN_EXPIRED');
    await expectAccepted(authz, token({ exp: NOW_SEC + 1 }));
    clock.advance(999);
    await expectAccepted(authz, token({ exp: NOW_SEC + 1 }));
    clock.advance(1);
    await expectRefused(authz, token({ exp: NOW_SEC + 1 }), 'ERR_TOKEN_EXPIRED');
  });

  test('clockToleranceSec: 60 accepts exp 59 s ago and refuses 60 s ago', async () => {
    const authz = authorizers.static({ clockToleranceSec: 60, tokenCache: false });
    await expectAccepted(authz, token({ exp: NOW_SEC - 59 }));
    await expectRefused(authz, token({ exp: NOW_SEC - 60 }), 'ERR_TOKEN_EXPIRED');
  });

  test('nbf in the future is ERR_TOKEN_NOT_YET_VALID (401)', async () => {
    await expectRefused(authorizers.static(), token({ nbf: NOW_SEC + 60 }), 'ERR_TOKEN_NOT_YET_VALID');
  });

  test('default: nbf 5 s ahead is accepted, 6 s ahead is ERR_TOKEN_NOT_YET_VALID', async () => {
    const authz = authorizers.static({ tokenCache: false });
    await expectAccepted(authz, token({ nbf: NOW_SEC + 5 }));
    await expectRefused(authz, token({ nbf: NOW_SEC + 6 }), 'ERR_TOKEN_NOT_YET_VALID');
  });

  test('clockToleranceSec: 0 refuses nbf 1 s ahead; the same token passes once the injected clock reaches nbf', async () => {
    const clock = new Clock();
    const authz = authorizers.static({ clockToleranceSec: 0, now: clock.now });
    const t = token({ nbf: NOW_SEC + 1 });
    await expectRefused(authz, t, 'ERR_TOKEN_NOT_YET_VALID');
    clock.advance(1_000);
    await expectAccepted(authz, t);
  });

  test('nbf in the past and nbf now are accepted', async () => {
    const authz = authorizers.static({ clockToleranceSec: 0, tokenCache: false });
    await expectAccepted(authz, token({ nbf: NOW_SEC - 100 }));
    await expectAccepted(authz, token({ nbf: NOW_SEC }));
  });

  test.each<[string, unknown]>([
    ['a numeric string', String(NOW_SEC)],
    ['null', null],
    ['an object', {}],
  ])('an nbf that is %s is ERR_TOKEN_INVALID', async (_label, nbf) => {
    await expectRefused(authorizers.static(), token({ nbf }), 'ERR_TOKEN_INVALID');
  });

  test('an nbf of 1e400 (written by hand) is refused', async () => {
    const json = JSON.stringify(baseClaims()).replace(/}$/, ',"nbf":1e400}');
    await expectRefused(authorizers.static(), signRaw(JSON.stringify(iamHeader()), json), 'ERR_TOKEN_INVALID');
  });

  test('an iat that is not a number is ERR_TOKEN_INVALID', async () => {
    await expectRefused(authorizers.static(), token({ iat: 'yesterday' }), 'ERR_TOKEN_INVALID');
  });
});

describe('token format (header cty)', () => {
  test.each<[string, unknown]>([
    ['another format', 't2'],
    ['upper case', 'T1'],
    ['padded with a space', ' t1'],
    ['a media type', 'JWT'],
    ['a number', 1],
    ['an array', ['t1']],
  ])('cty that is %s is ERR_TOKEN_INVALID', async (_label, cty) => {
    await expectRefused(authorizers.static(), token({}, { cty }), 'ERR_TOKEN_INVALID');
  });

  test('a missing cty is ERR_TOKEN_INVALID', async () => {
    const header = iamHeader();
    delete header.cty;
    await expectRefused(authorizers.static(), signObjects(header, baseClaims()), 'ERR_TOKEN_INVALID');
  });

  test('tokenFormats widens the accepted cty values, compared exactly', async () => {
    const authz = authorizers.static({ tokenFormats: ['t1', 't2'] });
    await expectAccepted(authz, token({}, { cty: 't2' }));
    await expectAccepted(authz, token({}, { cty: 't1' }));
    await expectRefused(authz, token({}, { cty: 'T2' }), 'ERR_TOKEN_INVALID');
  });

  test('tokenFormats can exclude t1', async () => {
    await expectRefused(authorizers.static({ tokenFormats: ['t2'] }), token(), 'ERR_TOKEN_INVALID');
  });
});

describe('tenant: tid and aud', () => {
  test('tid different from aud is ERR_TOKEN_INVALID', async () => {
    await expectRefused(authorizers.static(), token({ aud: 'tenant-1', tid: 'tenant-2' }), 'ERR_TOKEN_INVALID');
  });

  test('tid equal to aud is accepted, and either may be absent', async () => {
    const authz = authorizers.static();
    await expectAccepted(authz, token({ aud: 'tenant-9', tid: 'tenant-9' }));
    await expectAccepted(authz, token({ tid: undefined }));
  });

  test.each<[string, unknown]>([
    ['an array', ['tenant-1']],
    ['a number', 1],
  ])('an aud that is %s is ERR_TOKEN_INVALID (aud is a tenant id string)', async (_label, aud) => {
    await expectRefused(authorizers.static(), token({ aud, tid: undefined }), 'ERR_TOKEN_INVALID');
  });

  test('a tid that is not a string is ERR_TOKEN_INVALID', async () => {
    await expectRefused(authorizers.static(), token({ tid: 1 }), 'ERR_TOKEN_INVALID');
  });

  test('audience (string): a token for another tenant is ERR_TOKEN_INVALID', async () => {
    const authz = authorizers.static({ audience: 'tenant-1' });
    await expectAccepted(authz, token({ aud: 'tenant-1', tid: 'tenant-1' }));
    await expectRefused(authz, token({ aud: 'tenant-2', tid: 'tenant-2' }), 'ERR_TOKEN_INVALID');
  });

  test('audience (array): any listed tenant passes, others are ERR_TOKEN_INVALID', async () => {
    const authz = authorizers.static({ audience: ['tenant-2', 'tenant-3'] });
    await expectAccepted(authz, token({ aud: 'tenant-3', tid: 'tenant-3' }));
    await expectRefused(authz, token({ aud: 'tenant-1', tid: 'tenant-1' }), 'ERR_TOKEN_INVALID');
    await expectRefused(authz, token({ aud: 'TENANT-2', tid: 'TENANT-2' }), 'ERR_TOKEN_INVALID');
  });

  test('audience set: a token without aud is ERR_TOKEN_INVALID even when its tid matches', async () => {
    const authz = authorizers.static({ audience: 'tenant-1' });
    await expectRefused(authz, token({ aud: undefined, tid: 'tenant-1' }), 'ERR_TOKEN_INVALID');
  });

  test('audience unset: any tenant is accepted', async () => {
    await expectAccepted(authorizers.static(), token({ aud: 'tenant-42', tid: 'tenant-42' }));
  });
});

describe('sub and app', () => {
  test.each<[string, unknown]>([
    ['missing', undefined],
    ['empty', ''],
    ['a number', 7],
    ['null', null],
    ['an array', ['actor-alice']],
  ])('a sub that is %s is ERR_TOKEN_INVALID', async (_label, sub) => {
    await expectRefused(authorizers.static(), token({ sub }), 'ERR_TOKEN_INVALID');
  });

  test.each<[string, unknown]>([
    ['missing', undefined],
    ['empty', ''],
    ['a number', 7],
    ['null', null],
    ['an object', { id: 'app-1' }],
  ])('an app that is %s is ERR_TOKEN_INVALID', async (_label, app) => {
    await expectRefused(authorizers.static(), token({ app }), 'ERR_TOKEN_INVALID');
  });
});

describe('order of checks and the identity returned', () => {
  test('an expired token with a bad signature is ERR_TOKEN_INVALID: nothing about an unsigned payload is reported', async () => {
    const forged = signObjects(iamHeader(KEY, { kid: KEY.kid }), baseClaims({ exp: NOW_SEC - 3600 }), KEY2);
    await expectRefused(authorizers.static(), forged, 'ERR_TOKEN_INVALID');
  });

  test('a not-yet-valid token with a bad signature is ERR_TOKEN_INVALID', async () => {
    const forged = signObjects(iamHeader(KEY), baseClaims({ nbf: NOW_SEC + 3600 }), KEY2);
    await expectRefused(authorizers.static(), forged, 'ERR_TOKEN_INVALID');
  });

  test('the identity carries the token, the header and the typed claims (§2.2)', async () => {
    const t = token();
    const identity = await authorizers.static().authenticate(`Bearer ${t}`);
    expect(identity.token).toBe(t);
    expect(identity.header).toEqual({ alg: 'RS256', kid: KEY.kid, cty: 't1' });
    expect(identity.claims).toEqual({
      jti: 'jti-1',
      iss: ISSUER,
      sub: 'actor-alice',
      aud: 'tenant-1',
      tid: 'tenant-1',
      exp: NOW_SEC + 3600,
      iat: NOW_SEC,
      acc: 'acc-1',
      app: 'app-1',
      ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'], n: [] }],
    });
  });

  test.each(['jti', 'acc'])('a %s that is not a string is ERR_TOKEN_INVALID', async (claim) => {
    await expectRefused(authorizers.static(), token({ [claim]: 123 }), 'ERR_TOKEN_INVALID');
  });
});
