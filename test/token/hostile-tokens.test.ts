/**
 * Hostile tokens against a real loopback JWKS: each one is otherwise valid and well signed where
 * that is possible, so the only reason to refuse it is the defect under test. A canary server
 * stands in for every attacker-controlled URL and must never be contacted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Authorizer } from '../../src/index.js';
import { generateSigningKey, signJwt, type SigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { claims, json, KEY, KEY2, NOW_MS, startIam, startLoopback, useIam, type Iam, type Loopback } from '../helpers/index.js';
import {
  Authorizers, baseClaims, expectAccepted, iamHeader, expectRefused, hmacSign, rsaSign, segment, signingInput, signObjects, signRaw, withSegment,
} from './support.js';

/** The attacker's own key pair (KEY2 is in no JWKS of this file; renamed so its role is clear). */
const ATTACKER: SigningKey = { ...KEY2, kid: 'attacker', jwk: { ...KEY2.jwk, kid: 'attacker' } };

/** The IAM whose JWKS serves `KEY`; its request log spans the file. */
let iam: Iam;
let canary: Loopback;
const authorizers = new Authorizers();

beforeAll(async () => {
  iam = await startIam();
  canary = await startLoopback((req, res) => {
    if (req.url?.endsWith('.pem')) {
      res.writeHead(200, { 'content-type': 'application/x-pem-file' });
      res.end(ATTACKER.publicKey.export({ type: 'spki', format: 'pem' }));
      return;
    }
    json(res, 200, { keys: [ATTACKER.jwk, { ...ATTACKER.jwk, kid: KEY.kid }] });
  });
});

afterAll(async () => {
  await authorizers.closeAll();
  await Promise.all([iam.close(), canary.close()]);
});

/** An authorizer on the loopback JWKS (remote keys) at the fixed clock. */
function remote(): Authorizer {
  return iam.authorizer();
}

/** Valid claims for the loopback issuer. */
function valid(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return claims(iam.url, overrides);
}

function header(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { alg: 'RS256', kid: KEY.kid, cty: 't1', ...extra };
}

test('control: a genuine token is accepted by the same authorizer setup', async () => {
  await expectAccepted(remote(), iam.token());
});

describe('alg none', () => {
  test.each(['none', 'None', 'NONE', 'nOnE'])('alg "%s" with an empty signature is ERR_TOKEN_INVALID', async (alg) => {
    const authz = remote();
    const unsigned = `${signingInput(JSON.stringify(header({ alg })), JSON.stringify(valid()))}.`;
    await expectRefused(authz, unsigned, 'ERR_TOKEN_INVALID');
  });

  test.each(['none', 'None'])('alg "%s" with a real RSA signature over the input is still ERR_TOKEN_INVALID', async (alg) => {
    const authz = remote();
    const t = signObjects(header({ alg }), valid());
    await expectRefused(authz, t, 'ERR_TOKEN_INVALID');
  });
});

describe('HS256 key confusion (the RSA public key used as an HMAC secret)', () => {
  const spkiPem = KEY.publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const pkcs1Pem = KEY.publicKey.export({ type: 'pkcs1', format: 'pem' }) as string;
  const secrets: [string, string | Buffer][] = [
    ['the SPKI PEM', spkiPem.trimEnd()],
    ['the SPKI PEM with a trailing newline', spkiPem.trimEnd() + '\n'],
    ['the PKCS#1 PEM', pkcs1Pem.trimEnd()],
    ['the PKCS#1 PEM with a trailing newline', pkcs1Pem.trimEnd() + '\n'],
    ['the JWK n value (text)', KEY.jwk.n!],
    ['the JWK n value (bytes)', Buffer.from(KEY.jwk.n!, 'base64url')],
    ['the DER of the public key', KEY.publicKey.export({ type: 'spki', format: 'der' })],
  ];
  test.each(secrets)('HS256 signed with %s is ERR_TOKEN_INVALID', async (_label, secret) => {
    const authz = remote();
    const input = signingInput(JSON.stringify(header({ alg: 'HS256' })), JSON.stringify(valid()));
    await expectRefused(authz, `${input}.${hmacSign(input, secret)}`, 'ERR_TOKEN_INVALID');
  });

  test.each(['HS384', 'HS512'])('%s is refused like HS256', async (alg) => {
    const authz = remote();
    const input = signingInput(JSON.stringify(header({ alg })), JSON.stringify(valid()));
    await expectRefused(authz, `${input}.${hmacSign(input, spkiPem)}`, 'ERR_TOKEN_INVALID');
  });
});

describe('keys named in the token header are never used or fetched', () => {
  test.each([
    ['the attacker kid', ATTACKER.kid],
    ['the known kid', KEY.kid],
  ])('an embedded "jwk" (attacker key, %s) is ERR_TOKEN_INVALID', async (_label, kid) => {
    const authz = remote();
    const t = signObjects(header({ kid, jwk: { ...ATTACKER.jwk, kid } }), valid(), ATTACKER);
    await expectRefused(authz, t, 'ERR_TOKEN_INVALID');
  });

  test.each([
    ['jku', '/jwks.json', ATTACKER.kid],
    ['jku', '/jwks.json', KEY.kid],
    ['x5u', '/cert.pem', ATTACKER.kid],
    ['x5u', '/cert.pem', KEY.kid],
  ])('"%s" pointing at the canary (%s, kid %s) is ERR_TOKEN_INVALID and the canary sees no request', async (param, path, kid) => {
    const authz = remote();
    const t = signObjects(header({ kid, [param]: `${canary.url}${path}` }), valid(), ATTACKER);
    await expectRefused(authz, t, 'ERR_TOKEN_INVALID');
    expect(canary.requests).toHaveLength(0);
  });

  test('"x5c" carrying the attacker key is ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    const der = ATTACKER.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    const t = signObjects(header({ x5c: [der] }), valid(), ATTACKER);
    await expectRefused(authz, t, 'ERR_TOKEN_INVALID');
  });

  test('every request made went to the jwksUri, and none to the canary', async () => {
    const authz = remote();
    await expectAccepted(authz, iam.token());
    const t = signObjects(header({ kid: ATTACKER.kid, jku: `${canary.url}/jwks.json`, x5u: `${canary.url}/cert.pem` }), valid(), ATTACKER);
    await expectRefused(authz, t, 'ERR_TOKEN_INVALID');
    expect(canary.requests).toHaveLength(0);
    expect(iam.requests.length).toBeGreaterThan(0);
    for (const req of iam.requests) expect(req.url).toBe('/authentication/v1/.well-known/jwks.json');
  });
});

describe('signature', () => {
  test('a tampered payload (same header and signature) is ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    const genuine = iam.token();
    const forged = withSegment(genuine, 1, Buffer.from(JSON.stringify(valid({ sub: 'actor-admin' }))).toString('base64url'));
    await expectRefused(authz, forged, 'ERR_TOKEN_INVALID', { hidden: ['actor-admin'] });
  });

  test('a tampered header (extra member, same signature) is ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    const genuine = iam.token();
    const forged = withSegment(genuine, 0, Buffer.from(JSON.stringify(header({ typ: 'JWT' }))).toString('base64url'));
    await expectRefused(authz, forged, 'ERR_TOKEN_INVALID');
  });

  test('a token signed by another key carrying the known kid is ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    await expectRefused(authz, signJwt(valid(), KEY2, { kid: KEY.kid, cty: 't1' }), 'ERR_TOKEN_INVALID');
    // Again with the genuine key already cached (the warm path), and a different jti so no cache entry can match.
    await expectAccepted(authz, iam.token());
    await expectRefused(authz, signJwt(valid({ jti: 'forged' }), KEY2, { kid: KEY.kid, cty: 't1' }), 'ERR_TOKEN_INVALID');
  });

  test('with the genuine header already remembered (warm path), a tampered payload is still ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    const genuine = iam.token();
    await expectAccepted(authz, genuine); // its header segment is now remembered by the verifier
    const forged = withSegment(genuine, 1, Buffer.from(JSON.stringify(valid({ sub: 'actor-admin', jti: 'warm' }))).toString('base64url'));
    expect(segment(forged, 0)).toBe(segment(genuine, 0));
    await expectRefused(authz, forged, 'ERR_TOKEN_INVALID', { hidden: ['actor-admin'] });
  });

  test('a stripped signature ("a.b.") and a missing third segment ("a.b") are ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    const genuine = iam.token();
    const [h, p] = genuine.split('.') as [string, string];
    await expectRefused(authz, `${h}.${p}.`, 'ERR_TOKEN_INVALID');
    await expectRefused(authz, `${h}.${p}`, 'ERR_TOKEN_INVALID');
  });

  test('a signature with one flipped bit, an all-zero signature and a truncated one are ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    const genuine = iam.token();
    const sig = Buffer.from(segment(genuine, 2), 'base64url');
    const flipped = Buffer.from(sig);
    flipped[100] = flipped[100]! ^ 0x01;
    await expectRefused(authz, withSegment(genuine, 2, flipped.toString('base64url')), 'ERR_TOKEN_INVALID');
    await expectRefused(authz, withSegment(genuine, 2, Buffer.alloc(sig.length).toString('base64url')), 'ERR_TOKEN_INVALID');
    await expectRefused(authz, withSegment(genuine, 2, sig.subarray(0, 255).toString('base64url')), 'ERR_TOKEN_INVALID');
  });

  test('an RS256 signature computed over the decoded JSON rather than the encoded input is ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    const h = JSON.stringify(header());
    const p = JSON.stringify(valid());
    const t = `${signingInput(h, p)}.${rsaSign(`${h}.${p}`, KEY.privateKey)}`;
    await expectRefused(authz, t, 'ERR_TOKEN_INVALID');
  });
});

describe('critical and unencoded-payload headers', () => {
  test('an unknown "crit" extension (present in the header) is ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    const t = signObjects(header({ crit: ['urn:example:must-understand'], 'urn:example:must-understand': true }), valid());
    await expectRefused(authz, t, 'ERR_TOKEN_INVALID');
  });

  test('"crit" naming a registered claim-like parameter is ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    await expectRefused(authz, signObjects(header({ crit: ['exp'], exp: 1 }), valid()), 'ERR_TOKEN_INVALID');
  });

  test('"b64": false (without crit) is ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    await expectRefused(authz, signObjects(header({ b64: false }), valid()), 'ERR_TOKEN_INVALID');
  });

  test('"b64": false with crit ["b64"] and an unencoded payload is ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    const h = Buffer.from(JSON.stringify(header({ b64: false, crit: ['b64'] }))).toString('base64url');
    const payload = JSON.stringify(valid());
    const sig = rsaSign(`${h}.${payload}`, KEY.privateKey);
    // Detached-payload form (RFC 7797 §5.2) and the encoded form signed over the raw payload.
    await expectRefused(authz, `${h}..${sig}`, 'ERR_TOKEN_INVALID');
    await expectRefused(authz, `${h}.${Buffer.from(payload).toString('base64url')}.${sig}`, 'ERR_TOKEN_INVALID');
  });
});

describe('keys in the JWKS that must never be used', () => {
  const OCT_SECRET = Buffer.from('a shared secret of thirty-two by');
  const WEAK = generateSigningKey({ kid: 'weak-1024', modulusLength: 1024 });
  const server = useIam({
    keys: [
      KEY.jwk,
      { kty: 'oct', kid: 'oct-1', k: OCT_SECRET.toString('base64url'), alg: 'HS256', use: 'sig' },
      { kty: 'oct', kid: 'oct-2', k: OCT_SECRET.toString('base64url') },
      { ...WEAK.jwk },
      { ...WEAK.jwk, kid: 'weak-no-alg', alg: undefined },
    ],
  });

  function onServer(): Authorizer {
    return server.authorizer({ jwks: { minRefreshIntervalMs: 0 } });
  }

  test('control: KEY from the same JWKS verifies', async () => {
    await expectAccepted(onServer(), server.token());
  });

  test.each(['oct-1', 'oct-2'])('HS256 signed with the oct secret under kid %s is ERR_TOKEN_INVALID', async (kid) => {
    const authz = onServer();
    const input = signingInput(JSON.stringify({ alg: 'HS256', kid, cty: 't1' }), JSON.stringify(claims(server.url)));
    await expectRefused(authz, `${input}.${hmacSign(input, OCT_SECRET)}`, 'ERR_TOKEN_INVALID');
  });

  test('alg RS256 with an HMAC signature under the oct kid is ERR_TOKEN_INVALID', async () => {
    const authz = onServer();
    const input = signingInput(JSON.stringify({ alg: 'RS256', kid: 'oct-1', cty: 't1' }), JSON.stringify(claims(server.url)));
    await expectRefused(authz, `${input}.${hmacSign(input, OCT_SECRET)}`, 'ERR_TOKEN_INVALID');
  });

  test.each(['weak-1024', 'weak-no-alg'])('an RS256 token from the 1024-bit RSA key (kid %s) is ERR_TOKEN_INVALID', async (kid) => {
    const authz = onServer();
    const t = signJwt(claims(server.url), WEAK, { kid, cty: 't1' });
    await expectRefused(authz, t, 'ERR_TOKEN_INVALID');
  });
});

describe('structure', () => {
  test.each([
    ['a word', 'garbage'],
    ['three words', 'abc.def.ghi'],
    ['dots only', '...'],
    ['percent signs', '%%%.%%%.%%%'],
    ['four segments', 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln.c2ln'],
    ['a JWE-like five segments', 'eyJhbGciOiJSU0EtT0FFUCJ9.a.b.c.d'],
    ['unicode', 'éé.éé.éé'],
  ])('garbage (%s) is ERR_TOKEN_INVALID', async (_label, text) => {
    await expectRefused(remote(), text, 'ERR_TOKEN_INVALID');
  });

  test.each([
    ['a JSON array', '[1,2,3]'],
    ['a JSON string', '"tenant-1"'],
    ['JSON null', 'null'],
    ['a number', '12345'],
    ['not JSON at all', 'secret-actor-id-not-json'],
    ['truncated JSON', '{"sub":"secret-actor-id","exp":'],
  ])('a payload that is %s is ERR_TOKEN_INVALID and not echoed in the error', async (_label, payloadText) => {
    const authz = remote();
    const t = signRaw(JSON.stringify(header()), payloadText);
    await expectRefused(authz, t, 'ERR_TOKEN_INVALID', { hidden: payloadText.length >= 8 ? [payloadText, 'secret'] : [] });
  });

  test('a header that is not JSON is ERR_TOKEN_INVALID and not echoed in the error', async () => {
    const authz = remote();
    const t = signRaw('header-secret-text', JSON.stringify(valid()));
    await expectRefused(authz, t, 'ERR_TOKEN_INVALID', { hidden: ['header-secret-text', 'secret'] });
  });

  test('a payload that is not valid UTF-8 is ERR_TOKEN_INVALID', async () => {
    const authz = remote();
    const h = Buffer.from(JSON.stringify(header())).toString('base64url');
    const p = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]).toString('base64url'); // {"\xff\xfe":1}
    const input = `${h}.${p}`;
    await expectRefused(authz, `${input}.${rsaSign(input, KEY.privateKey)}`, 'ERR_TOKEN_INVALID');
  });

  test('garbage never reaches the JWKS endpoint', async () => {
    const server = await startIam();
    try {
      const authz = server.authorizer();
      for (const text of ['garbage', 'abc.def.ghi', 'e30.e30.e30', `${server.token()}x.y`]) {
        await expectRefused(authz, text, 'ERR_TOKEN_INVALID');
      }
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});

describe('size', () => {
  test('a 100 KB token is ERR_TOKEN_INVALID with zero requests to the JWKS server', async () => {
    const server = await startIam();
    try {
      const authz = server.authorizer();
      const huge = server.token({ pad: 'x'.repeat(75_000) });
      expect(huge.length).toBeGreaterThan(100_000);
      await expectRefused(authz, huge, 'ERR_TOKEN_INVALID');
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  test('maxTokenBytes is the exact limit: a token of that length passes, one byte less refuses it before any fetch', async () => {
    const server = await startIam();
    try {
      const t = server.token();
      const tight = server.authorizer({ maxTokenBytes: t.length - 1 });
      await expectRefused(tight, t, 'ERR_TOKEN_INVALID');
      expect(server.requests).toHaveLength(0);
      const exact = server.authorizer({ maxTokenBytes: t.length });
      await expectAccepted(exact, t);
    } finally {
      await server.close();
    }
  });

  test('the default maxTokenBytes is 8 KiB (8192 accepted, 8193 refused)', async () => {
    const authz = authorizers.static({ now: () => NOW_MS });
    const b64len = (text: string): number => Math.ceil((Buffer.byteLength(text) * 4) / 3);
    const exactly = (length: number): string => {
      // Grow the header (JSON whitespace) and a padding claim until the compact form has the wanted length.
      for (let spaces = 0; spaces < 4; spaces++) {
        const h = JSON.stringify(iamHeader()).replace('{', `{${' '.repeat(spaces)}`);
        for (let pad = 0; pad < 8192; pad++) {
          const p = JSON.stringify(baseClaims({ pad: 'p'.repeat(pad) }));
          if (b64len(h) + b64len(p) + 2 + 342 === length) return signRaw(h, p);
        }
      }
      throw new Error(`could not build a token of ${length} bytes`);
    };
    expect(exactly(8192)).toHaveLength(8192);
    await expectAccepted(authz, exactly(8192));
    await expectRefused(authz, exactly(8193), 'ERR_TOKEN_INVALID');
  });
});

describe('kid', () => {
  test.each<[string, unknown]>([
    ['absent', undefined],
    ['a number', 1],
    ['an empty string', ''],
    ['an array', [KEY.kid]],
    ['null', null],
  ])('a kid that is %s is ERR_TOKEN_INVALID and causes no JWKS request', async (_label, kid) => {
    const server = await startIam();
    try {
      const authz = server.authorizer();
      const h: Record<string, unknown> = { alg: 'RS256', cty: 't1' };
      if (kid !== undefined) h.kid = kid;
      await expectRefused(authz, signObjects(h, claims(server.url)), 'ERR_TOKEN_INVALID');
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  test('an unknown kid is ERR_TOKEN_INVALID (401), not an outage', async () => {
    const authz = iam.authorizer();
    await expectRefused(authz, signJwt(valid(), KEY2, { cty: 't1' }), 'ERR_TOKEN_INVALID');
  });
});
