/**
 * Rule "Signature": `alg` must be in `algorithms` (default RS256), and only RSA public signing keys
 * of at least 2048 bits from the JWKS are used. Keys below carry no `alg` unless the test is about
 * it, so a refused token is refused by the rule under test and not by the key's own `alg`.
 */
import { afterAll, describe, test } from 'vitest';
import { generateSigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { KEY, KEY2 } from '../helpers/index.js';
import { Authorizers, baseClaims, expectAccepted, expectRefused, hmacSign, iamHeader, rsaSign, signingInput, token } from './support.js';

const authorizers = new Authorizers();
afterAll(() => authorizers.closeAll());

function withoutAlg(jwk: Record<string, string>): Record<string, string> {
  const { alg: _alg, ...rest } = jwk;
  return rest;
}

const NO_ALG = { keys: [withoutAlg(KEY.jwk)] };

describe('algorithm allow-list', () => {
  test('control: RS256 with an alg-less JWK is accepted under the defaults', async () => {
    await expectAccepted(authorizers.static({ localJwks: NO_ALG }), token());
  });

  test.each(['PS256', 'PS384', 'PS512', 'RS384', 'RS512'])('%s, correctly signed, is ERR_TOKEN_INVALID under the default algorithms', async (alg) => {
    await expectRefused(authorizers.static({ localJwks: NO_ALG }), token({}, { alg }), 'ERR_TOKEN_INVALID');
  });

  test.each(['PS256', 'PS384', 'PS512', 'RS384', 'RS512'])('%s is accepted once listed in algorithms', async (alg) => {
    const authz = authorizers.static({ localJwks: NO_ALG, algorithms: ['RS256', alg] });
    await expectAccepted(authz, token({}, { alg }));
    await expectAccepted(authz, token());
  });

  test('algorithms without RS256 refuses RS256', async () => {
    await expectRefused(authorizers.static({ localJwks: NO_ALG, algorithms: ['PS256'] }), token(), 'ERR_TOKEN_INVALID');
  });

  test.each<[string, unknown]>([
    ['missing', undefined],
    ['a number', 256],
    ['lower case', 'rs256'],
    ['an array', ['RS256']],
    ['ES256', 'ES256'],
    ['EdDSA', 'EdDSA'],
  ])('an alg that is %s is ERR_TOKEN_INVALID', async (_label, alg) => {
    const header = iamHeader(KEY, { alg });
    if (alg === undefined) delete header.alg;
    const input = signingInput(JSON.stringify(header), JSON.stringify(baseClaims()));
    // A genuine RS256 signature over the input: only the alg value is wrong.
    await expectRefused(authorizers.static({ localJwks: NO_ALG }), `${input}.${rsaSign(input, KEY.privateKey)}`, 'ERR_TOKEN_INVALID');
  });

  test('HS256 is refused even when algorithms allows every RSA algorithm', async () => {
    const authz = authorizers.static({ localJwks: NO_ALG, algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] });
    const input = signingInput(JSON.stringify(iamHeader(KEY, { alg: 'HS256' })), JSON.stringify(baseClaims()));
    await expectRefused(authz, `${input}.${hmacSign(input, KEY.publicKey.export({ type: 'spki', format: 'pem' }))}`, 'ERR_TOKEN_INVALID');
  });

  test('a JWK that names an alg verifies only that alg', async () => {
    const authz = authorizers.static({ localJwks: { keys: [KEY.jwk] }, algorithms: ['RS256', 'RS384'] });
    await expectAccepted(authz, token());
    await expectRefused(authz, token({}, { alg: 'RS384' }), 'ERR_TOKEN_INVALID');
  });

  test('a JWK whose alg is not in algorithms is not used', async () => {
    const authz = authorizers.static({ localJwks: { keys: [{ ...KEY.jwk, alg: 'RS512' }] }, algorithms: ['RS256'] });
    await expectRefused(authz, token(), 'ERR_TOKEN_INVALID');
  });
});

describe('keys in the JWKS that are never used', () => {
  const WEAK = generateSigningKey({ kid: 'weak', modulusLength: 1024 });
  const SMALL = generateSigningKey({ kid: 'small', modulusLength: 2040 });
  const OCT = Buffer.from('0123456789abcdef0123456789abcdef');

  test('control: a 2048-bit key from the same set is used', async () => {
    const authz = authorizers.static({ localJwks: { keys: [withoutAlg(KEY.jwk), withoutAlg(WEAK.jwk)] } });
    await expectAccepted(authz, token());
  });

  test('a 1024-bit RSA key in the JWKS is never used', async () => {
    const authz = authorizers.static({ localJwks: { keys: [withoutAlg(KEY.jwk), withoutAlg(WEAK.jwk)] } });
    await expectRefused(authz, token({}, {}, WEAK), 'ERR_TOKEN_INVALID');
  });

  test('a 2040-bit RSA key (just under 2048) is never used', async () => {
    const authz = authorizers.static({ localJwks: { keys: [withoutAlg(SMALL.jwk)] } });
    await expectRefused(authz, token({}, {}, SMALL), 'ERR_TOKEN_INVALID');
  });

  test('a 1024-bit key sharing the kid of a good key does not verify in its place', async () => {
    const authz = authorizers.static({ localJwks: { keys: [withoutAlg(KEY.jwk), { ...withoutAlg(WEAK.jwk), kid: KEY.kid }] } });
    await expectAccepted(authz, token());
    await expectRefused(authz, token({}, { kid: KEY.kid }, WEAK), 'ERR_TOKEN_INVALID');
  });

  test('an oct key: HS256 with its secret and RS256 naming its kid are both ERR_TOKEN_INVALID', async () => {
    const oct = { kty: 'oct', kid: 'oct-1', k: OCT.toString('base64url') };
    const authz = authorizers.static({ localJwks: { keys: [withoutAlg(KEY.jwk), oct, { ...oct, kid: 'oct-2', alg: 'HS256' }] } });
    for (const [alg, kid] of [['HS256', 'oct-1'], ['HS256', 'oct-2'], ['RS256', 'oct-1']] as const) {
      const input = signingInput(JSON.stringify({ alg, kid, cty: 't1' }), JSON.stringify(baseClaims()));
      await expectRefused(authz, `${input}.${hmacSign(input, OCT)}`, 'ERR_TOKEN_INVALID');
    }
  });

  test('a key published with use "enc" is never used for signatures', async () => {
    const authz = authorizers.static({ localJwks: { keys: [{ ...withoutAlg(KEY.jwk), use: 'enc' }] } });
    await expectRefused(authz, token(), 'ERR_TOKEN_INVALID');
  });

  test('a key whose key_ops lack "verify" is never used', async () => {
    const authz = authorizers.static({ localJwks: { keys: [{ ...withoutAlg(KEY.jwk), key_ops: ['encrypt'] }] } });
    await expectRefused(authz, token(), 'ERR_TOKEN_INVALID');
    await expectAccepted(authorizers.static({ localJwks: { keys: [{ ...withoutAlg(KEY.jwk), key_ops: ['verify'] }] } }), token());
  });

  test('a published private key (JWK with d) is never used', async () => {
    const priv = { ...(KEY2.privateKey.export({ format: 'jwk' }) as Record<string, string>), kid: KEY2.kid };
    const authz = authorizers.static({ localJwks: { keys: [withoutAlg(KEY.jwk), priv] } });
    await expectRefused(authz, token({}, {}, KEY2), 'ERR_TOKEN_INVALID');
  });

  test('a JWK without kid is never used', async () => {
    const { kid: _kid, ...anonymous } = withoutAlg(KEY.jwk);
    await expectRefused(authorizers.static({ localJwks: { keys: [anonymous] } }), token(), 'ERR_TOKEN_INVALID');
  });

  test('several keys under one kid: the one that verifies wins', async () => {
    const authz = authorizers.static({ localJwks: { keys: [{ ...withoutAlg(KEY2.jwk), kid: KEY.kid }, withoutAlg(KEY.jwk)] } });
    await expectAccepted(authz, token());
  });
});
