/**
 * Construction checks (a TypeError naming the option), `getToken` parameter checks, `close()` and
 * dispatcher ownership, and the `./client` entry of the package's exports map.
 */
import { readFileSync } from 'node:fs';
import { MockAgent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { IamTokenClient, TokenExchangeError, type IamTokenClientOptions } from '../../src/client/index.js';
import { Clock } from '../helpers/clock.js';
import { countingIdp, expectExchangeError, startTokenServer, type TokenServer } from './harness.js';

const idpToken = async () => 'idp';
const VALID: IamTokenClientOptions = { baseUrl: 'https://iam.example.test', idpKey: 'corp', idpToken };

describe('options are checked at construction', () => {
  test.each<[string, unknown, RegExp]>([
    ['not an object', null, /options must be an object/],
    ['an unknown option', { ...VALID, tokenUrl: 'https://x' }, /unknown option "tokenUrl"/],
    ['baseUrl missing', { ...VALID, baseUrl: undefined }, /"baseUrl" must be a URL string/],
    ['baseUrl not a URL', { ...VALID, baseUrl: 'iam.example.test' }, /"baseUrl" is not a valid URL/],
    ['baseUrl not http(s)', { ...VALID, baseUrl: 'ftp://iam.example.test' }, /"baseUrl" must be an http\(s\) URL/],
    ['baseUrl with credentials', { ...VALID, baseUrl: 'https://u:p@iam.example.test' }, /"baseUrl" must not carry credentials/],
    ['baseUrl with a query', { ...VALID, baseUrl: 'https://iam.example.test/?a=1' }, /"baseUrl" must not carry a query/],
    ['idpKey missing', { ...VALID, idpKey: undefined }, /"idpKey" must be a non-empty string/],
    ['idpKey empty', { ...VALID, idpKey: '' }, /"idpKey"/],
    ['idpKey with a line break', { ...VALID, idpKey: 'corp\r\nx: 1' }, /"idpKey"/],
    ['idpToken not a function', { ...VALID, idpToken: 'token' }, /"idpToken" must be a function/],
    ['idpToken a string', { ...VALID, idpToken: 'token' }, /"idpToken" must be a function/],
    ['dispatcher not a Dispatcher', { ...VALID, dispatcher: {} }, /"dispatcher" must be an undici Dispatcher/],
    ['timeoutMs zero', { ...VALID, timeoutMs: 0 }, /"timeoutMs" must be a positive integer/],
    ['timeoutMs fractional', { ...VALID, timeoutMs: 1.5 }, /"timeoutMs"/],
    ['maxBytes negative', { ...VALID, maxBytes: -1 }, /"maxBytes" must be a positive integer/],
    ['maxCachedTokens zero', { ...VALID, maxCachedTokens: 0 }, /"maxCachedTokens" must be a positive integer/],
    ['refreshMarginSec negative', { ...VALID, refreshMarginSec: -1 }, /"refreshMarginSec" must be a non-negative number/],
    ['refreshMarginSec NaN', { ...VALID, refreshMarginSec: Number.NaN }, /"refreshMarginSec"/],
    ['now not a function', { ...VALID, now: 5 }, /"now" must be a function/],
  ])('%s', (_name, options, message) => {
    expect(() => new IamTokenClient(options as IamTokenClientOptions)).toThrow(TypeError);
    expect(() => new IamTokenClient(options as IamTokenClientOptions)).toThrow(message);
    expect(() => new IamTokenClient(options as IamTokenClientOptions)).toThrow(/^IamTokenClient: /);
  });

  test.each(['baseUrl', 'idpKey', 'idpToken', 'dispatcher', 'timeoutMs', 'maxBytes', 'refreshMarginSec', 'maxCachedTokens', 'now'])(
    '%s: null is a TypeError naming it, never the default',
    (name) => {
      const construct = () => new IamTokenClient({ ...VALID, [name]: null });
      expect(construct).toThrow(TypeError);
      expect(construct).toThrow(new RegExp(`^IamTokenClient: "${name}" must not be null`));
    },
  );

  test('valid options construct, with fractional margins allowed', async () => {
    const client = new IamTokenClient({ ...VALID, timeoutMs: 1, maxBytes: 1, maxCachedTokens: 1, refreshMarginSec: 0.5, now: () => 0 });
    await client.close();
  });
});

describe('getToken parameters', () => {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const client = new IamTokenClient({ ...VALID, dispatcher: agent });
  afterAll(async () => {
    await client.close();
    await agent.close();
  });

  test.each<[string, unknown, RegExp]>([
    ['no params', undefined, /expects \{ tenantId, expiryInSecs \}/],
    ['tenantId missing', { expiryInSecs: 60 }, /"tenantId" must be a non-empty string/],
    ['tenantId empty', { tenantId: '', expiryInSecs: 60 }, /"tenantId"/],
    ['tenantId a number', { tenantId: 1, expiryInSecs: 60 }, /"tenantId"/],
    ['expiryInSecs missing', { tenantId: 't' }, /"expiryInSecs" must be a positive integer/],
    ['expiryInSecs zero', { tenantId: 't', expiryInSecs: 0 }, /"expiryInSecs"/],
    ['expiryInSecs fractional', { tenantId: 't', expiryInSecs: 1.5 }, /"expiryInSecs"/],
    ['expiryInSecs a string', { tenantId: 't', expiryInSecs: '60' }, /"expiryInSecs"/],
    ['tenantId null', { tenantId: null, expiryInSecs: 60 }, /^getToken: "tenantId" must not be null/],
    ['expiryInSecs null', { tenantId: 't', expiryInSecs: null }, /^getToken: "expiryInSecs" must not be null/],
    ['idpToken null (not "the client\'s own")', { tenantId: 't', expiryInSecs: 60, idpToken: null }, /^getToken: "idpToken" must not be null/],
  ])('%s → TypeError (a rejection), nothing sent', async (_name, params, message) => {
    const p = client.getToken(params as never);
    await expect(p).rejects.toThrow(TypeError);
    await expect(p).rejects.toThrow(message);
  });
});

describe('close()', () => {
  let server: TokenServer;
  const clock = new Clock();
  beforeAll(async () => {
    server = await startTokenServer(clock);
    return () => server.close();
  });
  beforeEach(() => {
    server.seen.length = 0;
    server.delayMs = 0;
  });

  test('a given dispatcher is not closed; later calls reject with 503 and send nothing', async () => {
    const agent = new MockAgent();
    const close = vi.spyOn(agent, 'close');
    const client = new IamTokenClient({ ...VALID, dispatcher: agent });
    await client.close();
    expect(close).not.toHaveBeenCalled();
    const error = await expectExchangeError(client.getToken({ tenantId: 't', expiryInSecs: 60 }), 503);
    expect(error).toBeInstanceOf(TokenExchangeError);
    expect(error.message).toMatch(/closed/);
    close.mockRestore();
    await agent.close();
  });

  test('the owned dispatcher is closed, once, and cached tokens are dropped', async () => {
    const client = new IamTokenClient({ baseUrl: server.url, idpKey: 'corp', idpToken: countingIdp().idpToken, now: clock.now });
    await client.getToken({ tenantId: 't', expiryInSecs: 3600 });
    await client.close();
    await client.close();
    await expectExchangeError(client.getToken({ tenantId: 't', expiryInSecs: 3600 }), 503);
    expect(server.seen).toHaveLength(1);
  });

  test('an exchange in flight when close() is called settles (no hang, no unhandled rejection)', async () => {
    server.delayMs = 100;
    const client = new IamTokenClient({ baseUrl: server.url, idpKey: 'corp', idpToken: countingIdp().idpToken, now: clock.now });
    const pending = client.getToken({ tenantId: 't', expiryInSecs: 3600 }).then((t) => t, (e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const started = performance.now();
    await client.close();
    const outcome = await pending;
    expect(performance.now() - started).toBeLessThan(2_000);
    // Either the answer made it or the closing agent cut it off (503); never an unhandled rejection.
    if (typeof outcome !== 'string') expect(outcome).toMatchObject({ code: 'ERR_TOKEN_EXCHANGE_FAILED', status: 503 });
    await expectExchangeError(client.getToken({ tenantId: 't', expiryInSecs: 3600 }), 503);
  });
});

test('package.json exports "./client" with types first, next to the other entries', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> };
  const entry = pkg.exports['./client'];
  expect(entry).toStrictEqual({ types: './dist/src/client/index.d.ts', default: './dist/src/client/index.js' });
  expect(Object.keys(entry as object)[0]).toBe('types');
});
