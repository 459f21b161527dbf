/**
 * Failure paths, through an undici MockAgent with net connect disabled (and a loopback server for
 * the timing ones): IAM refusals keep their status, an unreachable IAM is 503, an answer that is
 * not a token is 502, redirects are not followed, oversize bodies are refused, a failing idpToken()
 * is 401 without contacting the IAM. No message ever holds a token; nothing failed is cached.
 */
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { IamTokenClient, IamTokenClientOptions } from '../../src/client/index.js';
import { Clock } from '../helpers/clock.js';
import { Clients, expectExchangeError, issue, startTokenServer, TOKEN_PATH, type TokenServer } from './harness.js';

const ORIGIN = 'https://iam.example.test';
const ELSEWHERE = 'https://elsewhere.example.test';
const IDP_TOKEN = 'idp-secret-0123456789abcdef';
const BODY = JSON.stringify({ tenantId: 'tenant-1', expiryInSecs: 3600, tokenFormat: 't1' });
const PARAMS = { tenantId: 'tenant-1', expiryInSecs: 3600 };
const MAX_BYTES = 2_048;

let agent: MockAgent;
let clock: Clock;
let idpCalls: number;
const clients = new Clients();

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  clock = new Clock();
  idpCalls = 0;
});
afterEach(async () => {
  await clients.closeAll();
  await agent.close();
});

function make(extra: Partial<IamTokenClientOptions> = {}): IamTokenClient {
  return makeReal({ dispatcher: agent, ...extra });
}

/** Without the MockAgent: the client's own default dispatcher, for the loopback server. */
function makeReal(extra: Partial<IamTokenClientOptions> = {}): IamTokenClient {
  return clients.make({
    baseUrl: ORIGIN,
    idpKey: 'corp',
    idpToken: async () => { idpCalls += 1; return IDP_TOKEN; },
    now: clock.now,
    maxBytes: MAX_BYTES,
    ...extra,
  });
}

/** The exchange as the client must send it: any interceptor answered means the request matched. */
function intercept() {
  return agent.get(ORIGIN).intercept({
    path: TOKEN_PATH,
    method: 'POST',
    body: BODY,
    headers: {
      authorization: `Bearer ${IDP_TOKEN}`,
      'idp-key': 'corp',
      accept: 'application/jwt',
      'content-type': 'application/json',
      'cache-control': 'no-store, no-cache, must-revalidate',
      'if-modified-since': '0',
    },
  });
}

const PROBLEM = { headers: { 'content-type': 'application/problem+json' } };
const JWT = { headers: { 'content-type': 'application/jwt' } };

function expectNoSecret(error: Error, ...secrets: string[]): void {
  for (const secret of [IDP_TOKEN, ...secrets]) {
    expect(error.message).not.toContain(secret);
    expect(String((error.cause as Error | undefined)?.message)).not.toContain(secret);
  }
}

describe('the IAM refuses: the error carries its status', () => {
  test.each([
    [400, 'Bad Request', 'expiryInSecs must be a positive integer'],
    [401, 'Unauthorized', 'the IdP token could not be verified'],
    [403, 'Forbidden', 'subject alice may not act for tenant-1'],
    [406, 'Not Acceptable', 'accept must allow application/jwt'],
    [415, 'Unsupported Media Type', 'content-type must be application/json'],
    [500, 'Internal Server Error', 'boom'],
  ])('HTTP %i → TokenExchangeError %i; the problem details in `problem`, never in the message', async (status, title, detail) => {
    intercept().reply(status, { type: 'about:blank', title, status, detail }, PROBLEM);
    const error = await expectExchangeError(make().getToken(PARAMS), status);
    expect(error.message).toBe(`token exchange for tenant "tenant-1" failed: the IAM answered HTTP ${status}`);
    expect((error as unknown as { problem?: string }).problem).toBe(`${title}: ${detail}`);
    agent.assertNoPendingInterceptors();
  });

  test('a refusal is not cached: the next call exchanges again', async () => {
    intercept().reply(403, { title: 'Forbidden' }, PROBLEM);
    intercept().reply(200, issue('tenant-1', 3600, clock.sec), JWT);
    const client = make();
    await expectExchangeError(client.getToken(PARAMS), 403);
    await expect(client.getToken(PARAMS)).resolves.toMatch(/^eyJ/);
    expect(idpCalls).toBe(2);
    agent.assertNoPendingInterceptors();
  });

  test('problem details that echo a token are redacted; the cause holds no body', async () => {
    const issued = issue('tenant-1', 3600, clock.sec);
    intercept().reply(401, { title: 'Unauthorized', detail: `token ${IDP_TOKEN} rejected; last issued ${issued}` }, PROBLEM);
    const error = await expectExchangeError(make().getToken(PARAMS), 401);
    expect((error as unknown as { problem?: string }).problem).toBe('Unauthorized: token [redacted] rejected; last issued [redacted]');
    expect(error.message).not.toContain('Unauthorized');
    expectNoSecret(error, issued);
    expect(JSON.stringify(error.cause, Object.getOwnPropertyNames(error.cause))).not.toContain(IDP_TOKEN);
  });

  test('control characters are stripped and long details cut', async () => {
    intercept().reply(400, { title: 'Bad\r\nRequest', detail: 'x '.repeat(500) }, PROBLEM);
    const error = await expectExchangeError(make().getToken(PARAMS), 400);
    expect(error.message).not.toMatch(/[\r\n]/);
    expect(error.message.length).toBeLessThan(320);
  });

  test.each([
    ['an HTML error page', 502, '<html>Bad gateway</html>', { headers: { 'content-type': 'text/html' } }],
    ['JSON without title or detail', 400, JSON.stringify({ error: 'invalid_request' }), { headers: { 'content-type': 'application/json' } }],
    ['broken problem+json', 400, '{"title": ', PROBLEM],
    ['an empty body', 503, '', {}],
    ['an error body larger than the 4 KiB read for details', 500, JSON.stringify({ title: 'Error', detail: 'y'.repeat(5_000) }), PROBLEM],
  ])('%s: the status only', async (_name, status, body, options) => {
    intercept().reply(status, body, options);
    const error = await expectExchangeError(make().getToken(PARAMS), status);
    expect(error.message).toBe(`token exchange for tenant "tenant-1" failed: the IAM answered HTTP ${status}`);
  });
});

describe('the IAM cannot be reached → 503', () => {
  test('a network error', async () => {
    intercept().replyWithError(new Error('connect ECONNREFUSED'));
    const error = await expectExchangeError(make().getToken(PARAMS), 503);
    expect(error.message).toMatch(/could not be reached/);
    expectNoSecret(error);
  });

  test('net connect disabled for an unknown origin', async () => {
    const error = await expectExchangeError(make({ baseUrl: 'https://nowhere.example.test' }).getToken(PARAMS), 503);
    expectNoSecret(error);
  });

  test('a network error is not cached: the next call exchanges again', async () => {
    intercept().replyWithError(new Error('socket hang up'));
    intercept().reply(200, issue('tenant-1', 3600, clock.sec), JWT);
    const client = make();
    await expectExchangeError(client.getToken(PARAMS), 503);
    await expect(client.getToken(PARAMS)).resolves.toMatch(/^eyJ/);
    agent.assertNoPendingInterceptors();
  });

  describe('against a real loopback server', () => {
    let server: TokenServer;
    beforeEach(async () => {
      server = await startTokenServer(clock);
    });
    afterEach(async () => {
      await server.close();
    });

    test('no answer within timeoutMs', async () => {
      server.handler = () => { /* never answers */ };
      const client = makeReal({ baseUrl: server.url, timeoutMs: 150 });
      const started = performance.now();
      const error = await expectExchangeError(client.getToken(PARAMS), 503);
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(error.message).toMatch(/within 150 ms/);
    });

    test('headers, then a body that never ends', async () => {
      server.handler = (_req, res) => { res.writeHead(200, { 'content-type': 'application/jwt' }); res.write('eyJhbGciOiJSUzI1NiJ9.'); };
      const client = makeReal({ baseUrl: server.url, timeoutMs: 150 });
      await expectExchangeError(client.getToken(PARAMS), 503);
    });

    test('the connection is reset', async () => {
      server.handler = (_req, res) => { res.socket!.destroy(); };
      const client = makeReal({ baseUrl: server.url });
      await expectExchangeError(client.getToken(PARAMS), 503);
    });

    test('a chunked body over maxBytes (no content-length) is refused → 502', async () => {
      server.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/jwt' });
        res.write(issue('tenant-1', 3600, clock.sec));
        res.end('A'.repeat(MAX_BYTES));
      };
      const client = makeReal({ baseUrl: server.url });
      const error = await expectExchangeError(client.getToken(PARAMS), 502);
      expect(error.message).toMatch(/exceeds 2048 bytes/);
    });
  });
});

describe('the IAM answers something that is not a token → 502', () => {
  const header = Buffer.from('{"alg":"RS256"}').toString('base64url');
  const payload = (claims: unknown) => Buffer.from(JSON.stringify(claims)).toString('base64url');
  test.each([
    ['a JSON-wrapped token', () => JSON.stringify({ token: issue('tenant-1', 3600, clock.sec) }), 'not a compact JWS'],
    ['a JSON string', () => JSON.stringify(issue('tenant-1', 3600, clock.sec)), 'not a compact JWS'],
    ['an empty body', () => '', 'not a compact JWS'],
    ['two segments', () => `${header}.${payload({ exp: 1 })}`, 'not a compact JWS'],
    ['four segments', () => `${header}.${payload({ exp: 1 })}.c2ln.c2ln`, 'not a compact JWS'],
    ['a space inside', () => `${header}.${payload({ exp: 1 })}.c2 ln`, 'not a compact JWS'],
    ['a header that is not JSON', () => `bm90LWpzb24.${payload({ exp: 1 })}.c2ln`, 'JOSE header'],
    ['a payload that is not JSON', () => `${header}.bm90LWpzb24.c2ln`, 'payload'],
    ['a payload that is an array', () => `${header}.${payload([1])}.c2ln`, 'payload'],
    ['no exp', () => `${header}.${payload({ sub: 'x' })}.c2ln`, '"exp"'],
    ['a string exp', () => `${header}.${payload({ exp: '4102444800' })}.c2ln`, '"exp"'],
  ])('%s', async (_name, body, phrase) => {
    const text = body();
    intercept().reply(200, text, JWT);
    const client = make();
    const error = await expectExchangeError(client.getToken(PARAMS), 502);
    expect(error.message).toContain(phrase);
    if (text.length > 0) expect(error.message).not.toContain(text);
    expectNoSecret(error);
    // Not cached either.
    intercept().reply(200, issue('tenant-1', 3600, clock.sec), JWT);
    await expect(client.getToken(PARAMS)).resolves.toMatch(/^eyJ/);
  });

  test('a redirect is not followed', async () => {
    intercept().reply(307, '', { headers: { location: `${ELSEWHERE}${TOKEN_PATH}` } });
    agent.get(ELSEWHERE).intercept({ path: TOKEN_PATH, method: 'POST' }).reply(200, issue('tenant-1', 3600, clock.sec), JWT);
    const error = await expectExchangeError(make().getToken(PARAMS), 502);
    expect(error.message).toMatch(/redirects are not followed/);
    expect(agent.pendingInterceptors()).toHaveLength(1);
    expect(agent.pendingInterceptors()[0]).toMatchObject({ origin: ELSEWHERE, path: TOKEN_PATH });
  });

  test('a body declared larger than maxBytes is refused before reading', async () => {
    intercept().reply(200, 'x', { headers: { 'content-type': 'application/jwt', 'content-length': String(MAX_BYTES + 1) } });
    const error = await expectExchangeError(make().getToken(PARAMS), 502);
    expect(error.message).toMatch(/exceeds 2048/);
  });

  test('a body larger than maxBytes is refused', async () => {
    const big = issue('tenant-1', 3600, clock.sec, { pad: 'p'.repeat(MAX_BYTES) });
    intercept().reply(200, big, JWT);
    const error = await expectExchangeError(make().getToken(PARAMS), 502);
    expect(error.message).toMatch(/exceeds 2048/);
    expect(error.message).not.toContain(big.slice(0, 40));
  });

  test('a larger maxBytes accepts it', async () => {
    const big = issue('tenant-1', 3600, clock.sec, { pad: 'p'.repeat(MAX_BYTES) });
    intercept().reply(200, big, JWT);
    await expect(make({ maxBytes: 8_192 }).getToken(PARAMS)).resolves.toBe(big);
  });
});

describe('idpToken() fails → 401, the IAM is not contacted, the next call retries', () => {
  test('it rejects', async () => {
    const cause = new Error('IdP unreachable');
    let calls = 0;
    const client = make({
      idpToken: async () => {
        calls += 1;
        if (calls === 1) throw cause;
        return IDP_TOKEN;
      },
    });
    const error = await expectExchangeError(client.getToken(PARAMS), 401);
    expect(error.message).toBe('idpToken() failed: no IdP token to exchange');
    expect(error.cause).toBe(cause);
    expect(agent.pendingInterceptors()).toHaveLength(0);

    intercept().reply(200, issue('tenant-1', 3600, clock.sec), JWT);
    await expect(client.getToken(PARAMS)).resolves.toMatch(/^eyJ/);
    expect(calls).toBe(2);
    agent.assertNoPendingInterceptors();
  });

  test('it throws synchronously', async () => {
    const client = make({ idpToken: () => { throw new Error('sync'); } });
    await expectExchangeError(client.getToken(PARAMS), 401);
  });

  test.each([
    ['an empty string', ''],
    ['a "Bearer " prefixed token', `Bearer ${IDP_TOKEN}`],
    ['a token with a line break', `${IDP_TOKEN}\r\nx-injected: 1`],
    ['a non-string', 42],
    ['undefined', undefined],
  ])('it resolves with %s', async (_name, value) => {
    const client = make({ idpToken: async () => value as string });
    const error = await expectExchangeError(client.getToken(PARAMS), 401);
    expect(error.message).toMatch(/the IdP token must be the bare token/);
    expectNoSecret(error);
  });
});
