/**
 * Misconfiguration explains itself (issue #9 §7, first half): an issuer mismatch names the expected
 * and the actual `iss` (`http://localhost:…` vs `http://127.0.0.1:…`), a tenant mismatch the expected
 * and actual `aud` — in the error message and the `iam-authz:authenticate:failed` event, for logs —
 * while the caller's 401 body says only what failed, unless `exposeDecision` is on.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { channels, createAuthorizer, TokenInvalidError, type Authorizer, type AuthorizerOptions } from '../../src/index.js';
import { startDevIam, type DevIam } from 'iam-authz-dev';
import { startApp } from '../adapters/apps.js';

let iam: DevIam;
let token: string;
const authorizers: Authorizer[] = [];
const create = (options: AuthorizerOptions) => {
  const a = createAuthorizer(options);
  authorizers.push(a);
  return a;
};

beforeAll(async () => {
  iam = await startDevIam({ config: fileURLToPath(new URL('../../examples/vehicle-service/iam.json', import.meta.url)), console: false });
  token = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
});
afterAll(async () => {
  for (const a of authorizers) await a.close();
  await iam.close();
});

async function refusal(authorizer: Authorizer): Promise<{ error: TokenInvalidError; events: { code: string; status: number; message: string }[] }> {
  const events: { code: string; status: number; message: string }[] = [];
  const listen = (m: unknown) => { events.push(m as (typeof events)[number]); };
  subscribe(channels.authenticateFailed, listen);
  try {
    const error = await authorizer.authenticate(`Bearer ${token}`).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(TokenInvalidError);
    return { error: error as TokenInvalidError, events };
  } finally {
    unsubscribe(channels.authenticateFailed, listen);
  }
}

describe('issuer and tenant mismatches name expected and actual values', () => {
  test('localhost vs 127.0.0.1: the message and the event name both issuers', async () => {
    const localhost = iam.baseUrl.replace('127.0.0.1', 'localhost');
    const { error, events } = await refusal(create({ baseUrl: localhost, jwksUri: `${iam.issuer}/.well-known/jwks.json` }));
    expect(error.message).toBe(`token issuer "${iam.issuer}" is not the expected "${localhost}/authentication/v1"`);
    expect(error.detail).toBe('token issuer is not the expected one');
    expect(events).toStrictEqual([{ code: 'ERR_TOKEN_INVALID', status: 401, message: error.message }]);
    expect(JSON.stringify(events)).not.toContain(token.split('.')[1]);
  });

  test('a tenant not in audience: the message names the token\'s aud and the accepted ones', async () => {
    const { error } = await refusal(create({ baseUrl: iam.baseUrl, audience: ['tenant-2', 'tenant-3'] }));
    expect(error.message).toBe('token audience (tenant) "tenant-1" is not accepted (audience: "tenant-2", "tenant-3")');
    expect(error.detail).toBe('token audience (tenant) is not accepted');
  });

  test.each([false, true])('through a guard the 401 body names them only with exposeDecision (%s)', async (exposeDecision) => {
    const authorizer = create({ baseUrl: iam.baseUrl, audience: 'tenant-2' });
    const app = await startApp('express', authorizer, { exposeDecision });
    try {
      const res = await fetch(`${app.url}/vehicle/WVW1`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(401);
      const text = await res.text();
      const body = JSON.parse(text) as { detail: string; code: string };
      expect(body.code).toBe('ERR_TOKEN_INVALID');
      if (exposeDecision) {
        expect(body.detail).toContain('"tenant-1"');
        expect(body.detail).toContain('"tenant-2"');
      } else {
        expect(body.detail).toBe('token audience (tenant) is not accepted');
        expect(text).not.toContain('tenant-2');
        expect(res.headers.get('www-authenticate')).not.toContain('tenant-2');
      }
    } finally {
      await app.close();
    }
  });
});
