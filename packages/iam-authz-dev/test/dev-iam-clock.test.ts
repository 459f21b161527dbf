/**
 * `startDevIam({ now })`: the development IAM on the test's clock, shared with the authorizer, so
 * expiry is tested by moving the clock instead of waiting.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { createAuthorizer } from 'iam-authz';
import { startDevIam, type DevIam } from '../src/index.js';
import { Clock, NOW_MS } from '../../../test/helpers/clock.js';
import { ConsoleClient } from './console/support.js';
import { decodeSegment, exampleConfig, expectProblem, requestToken } from './support.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

async function start(clock: Clock, withConsole = false): Promise<DevIam> {
  const iam = await startDevIam({ config: exampleConfig('http://127.0.0.1:9/never-fetched'), console: withConsole, now: clock.now });
  open.push(iam);
  return iam;
}

describe('the development IAM on an injected clock', () => {
  test('tokens are issued at the clock\'s time, and expire for an authorizer on the same clock', async () => {
    const clock = new Clock();
    const iam = await start(clock);
    const authz = createAuthorizer({ baseUrl: iam.baseUrl, now: clock.now, clockToleranceSec: 0 });
    open.push(authz);
    const token = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', expiryInSecs: 60 });
    expect(decodeSegment(token, 1)).toMatchObject({ iat: NOW_MS / 1000, exp: NOW_MS / 1000 + 60 });
    expect((await authz.authenticate(`Bearer ${token}`)).claims.sub).toBe('actor-alice');
    clock.advance(60_000);
    await expect(authz.authenticate(`Bearer ${token}`)).rejects.toMatchObject({ code: 'ERR_TOKEN_EXPIRED' });
  });

  test('the token endpoint judges the IdP token by the same clock', async () => {
    const clock = new Clock();
    const iam = await start(clock);
    const idpToken = iam.mintIdpToken('alice', 120);
    const granted = await requestToken(iam, { idpToken, idpKey: 'dev' });
    expect(granted.status).toBe(200);
    expect(decodeSegment(granted.body, 1)).toMatchObject({ sub: 'actor-dev-alice', iat: NOW_MS / 1000 });
    clock.advance(121_000);
    expectProblem(await requestToken(iam, { idpToken, idpKey: 'dev' }), 401, /not valid for this IdP/);
  });

  test('the console\'s decision explorer judges tokens by the IAM\'s clock', async () => {
    const clock = new Clock(); // two days behind the real clock: its tokens are long expired in real time
    const iam = await start(clock, true);
    const client = await new ConsoleClient(iam.baseUrl).open();
    const token = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', expiryInSecs: 60 });
    const ask = async () => (await client.send('POST', 'explain', { token, service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } })).json() as { outcome: string; decision?: { granted: boolean }; error?: { code: string } };
    expect(await ask()).toMatchObject({ outcome: 'decided', decision: { granted: true } });
    clock.advance(3_600_000);
    expect(await ask()).toMatchObject({ outcome: 'error', error: { code: 'ERR_TOKEN_EXPIRED' } });
  });

  test('a "now" that is not a function is refused before a port is taken', async () => {
    await expect(startDevIam({ config: exampleConfig('http://127.0.0.1:9/x'), now: 5 as unknown as () => number })).rejects.toThrow(/"now" must be a function/);
  });
});
