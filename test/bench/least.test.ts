/**
 * The distinct-token limit of `bench/ceiling/least.ts` is only a limit if it makes the decision
 * iam-authz makes: for each token below, valid or refused for one reason, its status must be the
 * library's (200, 401 or 403), or the measured limit would be a verifier that skips a check.
 */
import { expect, test } from 'vitest';
import { createLeastVerifier } from '../../bench/ceiling/least.js';
import type { IamAuthzError } from '../../src/index.js';
import { claims, KEY, KEY2, NOW_MS, NOW_SEC, useIam } from '../helpers/index.js';
import { signRaw, withSegment, segment } from '../token/support.js';

const iam = useIam();

test('the least verifier answers every token as iam-authz does', async () => {
  const authz = iam.authorizer({ audience: 'tenant-1', tokenCache: false });
  const least = createLeastVerifier({
    issuer: iam.issuer, tenant: 'tenant-1', jwks: { keys: [KEY.jwk] }, granting: new Set(['DRIVER', 'OWNER']), now: () => NOW_MS,
  });
  const valid = iam.token();
  const header = (extra: Record<string, unknown>): Record<string, unknown> => ({ alg: 'RS256', kid: KEY.kid, cty: 't1', ...extra });
  const cases: Record<string, [string | undefined, string]> = {
    'valid, VIN=WVW1': [`Bearer ${valid}`, 'WVW1'],
    'valid, another VIN': [`Bearer ${valid}`, 'OTHER'],
    'a role no policy grants': [iam.bearer({ ars: [{ r: ['GUEST'], c: ['VIN=WVW1'] }] }), 'WVW1'],
    'ars not an array': [iam.bearer({ ars: { r: ['DRIVER'], c: ['VIN=WVW1'] } }), 'WVW1'],
    'no token': [undefined, 'WVW1'],
    'another scheme': [`Basic ${valid}`, 'WVW1'],
    expired: [iam.bearer({ exp: NOW_SEC - 3600 }), 'WVW1'],
    'exp not an integer': [iam.bearer({ exp: 'soon' }), 'WVW1'],
    'not yet valid': [iam.bearer({ nbf: NOW_SEC + 3600 }), 'WVW1'],
    'another issuer': [iam.bearer({ iss: 'https://elsewhere.test/authentication/v1' }), 'WVW1'],
    'another tenant': [iam.bearer({ aud: 'tenant-2', tid: 'tenant-2' }), 'WVW1'],
    'tid not aud': [iam.bearer({ tid: 'tenant-2' }), 'WVW1'],
    'no sub': [iam.bearer({ sub: undefined }), 'WVW1'],
    'no app': [iam.bearer({ app: '' }), 'WVW1'],
    'signed by another key under our kid': [iam.bearer({}, {}, { ...KEY2, kid: KEY.kid }), 'WVW1'],
    'alg HS256': [`Bearer ${signRaw(JSON.stringify(header({ alg: 'HS256' })), JSON.stringify(claims(iam.url)))}`, 'WVW1'],
    'a crit header': [`Bearer ${signRaw(JSON.stringify(header({ crit: ['exp'] })), JSON.stringify(claims(iam.url)))}`, 'WVW1'],
    'b64 false': [`Bearer ${signRaw(JSON.stringify(header({ b64: false })), JSON.stringify(claims(iam.url)))}`, 'WVW1'],
    'another cty': [`Bearer ${signRaw(JSON.stringify(header({ cty: 'JWT' })), JSON.stringify(claims(iam.url)))}`, 'WVW1'],
    'a padded payload': [`Bearer ${withSegment(valid, 1, `${segment(valid, 1)}=`)}`, 'WVW1'],
    'a tampered payload': [`Bearer ${withSegment(valid, 1, segment(iam.token({ sub: 'actor-mallory' }), 1))}`, 'WVW1'],
  };
  const answers: Record<string, [number, number]> = {};
  for (const [name, [authorization, vin]] of Object.entries(cases)) {
    const library = await authz.check(authorization, { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: vin } })
      .then(({ decision }) => (decision.granted ? 200 : 403), (error: unknown) => (error as IamAuthzError).status);
    answers[name] = [least(authorization, vin), library];
  }
  for (const [name, [ours, library]] of Object.entries(answers)) expect(ours, name).toBe(library);
  // Not all alike: the table covers grants, denials and refusals.
  expect(new Set(Object.values(answers).map(([, library]) => library))).toEqual(new Set([200, 401, 403]));
});
