/**
 * The development IAM's network-free core: token exchange, policy lookup and minting driven by an
 * injected clock, with no server and no socket (the jwksUri IdP of the config is never asked).
 */
import fc from 'fast-check';
import { decodeJwt } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { BodyProblemError, createDevIamCore, type DevIamCore } from '../src/dev-iam-core.js';
import { signJwt } from '../src/sign-jwt.js';
import { Clock, NOW_MS } from '../../../test/helpers/clock.js';
import { exampleConfig, INLINE_ISSUER, INLINE_KEY } from './support.js';

const ISSUER = 'http://iam.invalid/authentication/v1';
const TOKEN_BODY = { tenantId: 'tenant-1', expiryInSecs: 600, tokenFormat: 't1' };

function core(clock = new Clock()): DevIamCore {
  return createDevIamCore({ config: exampleConfig('http://127.0.0.1:9/never-fetched'), issuer: ISSUER, devIdpIssuer: 'http://iam.invalid/dev-idp', now: clock.now });
}

function inlineIdpToken(clock: Clock, subject: string, lifetimeSecs: number): string {
  const iat = Math.floor(clock.now() / 1000);
  return signJwt({ iss: INLINE_ISSUER, sub: subject, iat, exp: iat + lifetimeSecs }, INLINE_KEY);
}

describe('the development IAM core', () => {
  it('mints tokens at the injected clock\'s time', () => {
    const claims = decodeJwt(core().mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', expiryInSecs: 60 }));
    expect(claims).toMatchObject({ iss: ISSUER, sub: 'actor-alice', aud: 'tenant-1', iat: NOW_MS / 1000, exp: NOW_MS / 1000 + 60, ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] });
  });

  it('exchanges an IdP token for an IAM token, and judges the IdP token\'s expiry by the injected clock', async () => {
    const clock = new Clock();
    const iam = core(clock);
    const idpToken = inlineIdpToken(clock, 'carol', 60);
    const request = { idpToken, idpKey: 'inline', readBody: () => Promise.resolve(TOKEN_BODY) };
    const granted = await iam.exchangeToken(request);
    expect('token' in granted && decodeJwt(granted.token)).toMatchObject({ sub: 'actor-carol', tid: 'tenant-1', exp: NOW_MS / 1000 + 600 });
    clock.advance(61_000);
    expect(await iam.exchangeToken(request)).toMatchObject({ status: 401, detail: 'the IdP token is not valid for this IdP' });
  });

  it('the built-in IdP\'s tokens follow the same clock', async () => {
    const clock = new Clock();
    const iam = core(clock);
    const idpToken = iam.mintIdpToken('alice', 30);
    const request = { idpToken, idpKey: 'dev', readBody: () => Promise.resolve(TOKEN_BODY) };
    expect(await iam.exchangeToken(request)).toHaveProperty('token');
    clock.advance(31_000);
    expect(await iam.exchangeToken(request)).toMatchObject({ status: 401 });
  });

  it('checks credentials before it reads the body, and answers a body problem with that problem', async () => {
    const iam = core();
    const readBody = vi.fn(() => Promise.resolve(TOKEN_BODY));
    expect(await iam.exchangeToken({ idpToken: undefined, idpKey: 'inline', readBody })).toMatchObject({ status: 401 });
    expect(await iam.exchangeToken({ idpToken: 'x', idpKey: undefined, readBody })).toMatchObject({ status: 400, detail: 'the idp-key header is required' });
    expect(await iam.exchangeToken({ idpToken: 'x', idpKey: 'nope', readBody })).toMatchObject({ status: 400, detail: 'no IdP configuration entry "nope"' });
    expect(readBody).not.toHaveBeenCalled();
    const tooLarge = () => Promise.reject(new BodyProblemError({ status: 413, detail: 'too large' }));
    expect(await iam.exchangeToken({ idpToken: 'x', idpKey: 'inline', readBody: tooLarge })).toEqual({ status: 413, detail: 'too large' });
    const badBody = () => Promise.resolve({ ...TOKEN_BODY, tokenFormat: 't2' });
    expect(await iam.exchangeToken({ idpToken: 'x', idpKey: 'inline', readBody: badBody })).toEqual({ status: 400, detail: '"tokenFormat" must be "t1"' });
  });

  it('refuses an actor outside its tenants, and a subject that is no actor', async () => {
    const clock = new Clock();
    const iam = core(clock);
    const other = { idpToken: inlineIdpToken(clock, 'carol', 60), idpKey: 'inline', readBody: () => Promise.resolve({ ...TOKEN_BODY, tenantId: 'tenant-2' }) };
    expect(await iam.exchangeToken(other)).toMatchObject({ status: 403, detail: 'the actor has no access to this tenant' });
    const stranger = { idpToken: inlineIdpToken(clock, 'mallory', 60), idpKey: 'inline', readBody: () => Promise.resolve(TOKEN_BODY) };
    expect(await iam.exchangeToken(stranger)).toMatchObject({ status: 403, detail: 'the IdP subject is not an actor of this IAM' });
  });

  it('serves the policy of the token\'s application while the token is valid by the injected clock', async () => {
    const clock = new Clock();
    const iam = core(clock);
    const token = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', expiryInSecs: 60 });
    expect(await iam.policyForToken(token)).toEqual({ policy: iam.policyOf('app-1') });
    clock.advance(61_000);
    expect(await iam.policyForToken(token)).toMatchObject({ status: 401 });
    expect(await iam.policyForToken(undefined)).toMatchObject({ status: 401 });
    const orphan = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { app: 'app-gone' } });
    expect(await iam.policyForToken(orphan)).toMatchObject({ status: 404 });
  });

  it('a rotation keeps the previous key in the JWKS, and the old key\'s tokens still get the policy', async () => {
    const iam = core();
    const before = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
    const oldKid = iam.jwks().keys[0]?.kid;
    const kid = iam.rotateKeys();
    expect(iam.jwks().keys.map((k) => k.kid)).toEqual([kid, oldKid]);
    expect(await iam.policyForToken(before)).toHaveProperty('policy');
    iam.rotateKeys();
    expect(await iam.policyForToken(before)).toMatchObject({ status: 401 });
  });

  it('any body, IdP key or token gets a token or a 400/401/403, never a throw (property)', async () => {
    const clock = new Clock();
    const iam = core(clock);
    const idpToken = inlineIdpToken(clock, 'carol', 3600);
    await fc.assert(fc.asyncProperty(
      fc.oneof(fc.jsonValue(), fc.record({ tenantId: fc.oneof(fc.constant('tenant-1'), fc.string()), expiryInSecs: fc.oneof(fc.integer(), fc.double()), tokenFormat: fc.oneof(fc.constant('t1'), fc.string()) }, { requiredKeys: [] })),
      fc.oneof(fc.constant('inline'), fc.constant('dev'), fc.constant(undefined), fc.string()),
      fc.oneof(fc.constant(idpToken), fc.constant(undefined), fc.string()),
      async (body, idpKey, token) => {
        const outcome = await iam.exchangeToken({ idpToken: token, idpKey, readBody: () => Promise.resolve(body) });
        if ('token' in outcome) expect(decodeJwt(outcome.token)).toMatchObject({ sub: 'actor-carol', tid: 'tenant-1' });
        else expect([400, 401, 403]).toContain(outcome.status);
      },
    ), { numRuns: 300 });
  });
});
