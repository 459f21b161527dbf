/**
 * The development IAM cannot be turned against its host: every endpoint answers only to the
 * `Host` names of where it listens (a DNS-rebinding page cannot mint tokens), and bound beyond
 * loopback its console (which can add JWKS URLs the IAM then fetches) is off unless asked for.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startDevIam, type DevIam } from '../src/index.js';
import { isAllowedHost } from '../src/host-rule.js';
import { exampleConfig, send, tokenHeaders, TOKEN_REQUEST, type RawResponse } from './support.js';

const config = () => exampleConfig('http://127.0.0.1:9/jwks');

/** One request per endpoint of the IAM, with the given `Host`. */
function everyEndpoint(iam: DevIam, host: string): [string, () => Promise<RawResponse>][] {
  const url = (path: string) => `${iam.baseUrl}${path}`;
  const jsonPost = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    send(url(path), { method: 'POST', headers: { host, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return [
    ['POST /authentication/v1/tokens', () => send(url('/authentication/v1/tokens'), {
      method: 'POST', headers: { ...tokenHeaders(iam.mintIdpToken('alice'), 'dev'), host }, body: JSON.stringify(TOKEN_REQUEST),
    })],
    ['POST /dev-idp/token', () => jsonPost('/dev-idp/token', { subject: 'alice' })],
    ['GET /authentication/v1/.well-known/jwks.json', () => send(url('/authentication/v1/.well-known/jwks.json'), { headers: { host } })],
    ['GET /dev-idp/.well-known/jwks.json', () => send(url('/dev-idp/.well-known/jwks.json'), { headers: { host } })],
    ['GET /policy/v1/roles', () => send(url('/policy/v1/roles'), { headers: { host, authorization: `Bearer ${iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' })}` } })],
    ['GET /console/api/session', () => send(url('/console/api/session'), { headers: { host } })],
    ['GET /console', () => send(url('/console'), { headers: { host } })],
  ];
}

describe('Host check on every endpoint', () => {
  let iam: DevIam;
  let port: number;
  beforeAll(async () => {
    iam = await startDevIam({ config: config() });
    port = Number(new URL(iam.baseUrl).port);
  });
  afterAll(async () => { await iam.close(); });

  const refused = () => [`evil.example:${port}`, `127.0.0.1.evil.example:${port}`, `localhost.evil.example:${port}`, `EVIL.example:${port}`, `127.0.0.1:${port === 1 ? 2 : 1}`, `127.0.0.1`];
  test('a Host that is not the bound loopback name/address: 4xx, and no token in the body', async () => {
    for (const host of refused()) {
      for (const [name, call] of everyEndpoint(iam, host)) {
        const res = await call();
        expect({ name, host, status: res.status }).toStrictEqual({ name, host, status: 403 });
        expect(res.body).not.toMatch(/eyJ|csrfToken|"keys"/);
        expect(res.headers['content-type']).toBe('application/problem+json');
      }
    }
  });

  test('127.0.0.1:PORT and localhost:PORT (any case) keep working', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LocalHost:${port}`]) {
      for (const [name, call] of everyEndpoint(iam, host)) {
        const res = await call();
        expect({ name, host, status: res.status }).toStrictEqual({ name, host, status: 200 });
      }
    }
  });
});

describe('the Host rule', () => {
  test.each([
    ['http://127.0.0.1:4000', '127.0.0.1:4000', true],
    ['http://127.0.0.1:4000', 'localhost:4000', true],
    ['http://127.0.0.1:4000', '[::1]:4000', true],
    ['http://127.0.0.1:4000', '192.0.2.10:4000', false],
    ['http://127.0.0.1:4000', 'evil.example:4000', false],
    ['http://127.0.0.1:4000', '127.0.0.1.evil.example:4000', false],
    ['http://127.0.0.1:4000', '127.0.0.1:4001', false],
    ['http://127.0.0.1:4000', undefined, false],
    // Bound beyond loopback: an IP literal with the port is allowed (a rebinding page sends its own DNS name, never an IP), names are not.
    ['http://0.0.0.0:4000', '192.0.2.10:4000', true],
    ['http://0.0.0.0:4000', '[2001:db8::1]:4000', true],
    ['http://0.0.0.0:4000', '127.0.0.1:4000', true],
    ['http://0.0.0.0:4000', 'evil.example:4000', false],
    ['http://0.0.0.0:4000', '127.0.0.1.evil.example:4000', false],
    ['http://0.0.0.0:4000', '192.0.2.10:4001', false],
    ['http://0.0.0.0:4000', '192.0.2.10', false],
    ['http://0.0.0.0:4000', '1.2.3:4000', false],
  ])('bound at %s, Host %s → %s', (baseUrl, host, allowed) => {
    expect(isAllowedHost(host, baseUrl)).toBe(allowed);
  });
});

describe('bound to a non-loopback address', () => {
  const running: DevIam[] = [];
  afterAll(async () => { for (const iam of running) await iam.close(); });
  const start = async (options: { console?: boolean } = {}) => {
    // The not-loopback warning is expected here.
    const onWarning = () => undefined;
    process.on('warning', onWarning);
    const iam = await startDevIam({ config: config(), host: '0.0.0.0', ...options });
    process.off('warning', onWarning);
    running.push(iam);
    const port = new URL(iam.baseUrl).port;
    // Reached over loopback, as another machine would with the host's address.
    const local = `http://127.0.0.1:${port}`;
    return { iam, local, port };
  };

  test('the console and its API are off (404); the JWKS and token endpoints still serve', async () => {
    const { iam, local, port } = await start();
    expect(iam.consoleUrl).toBeUndefined();
    for (const host of [`127.0.0.1:${port}`, `192.0.2.10:${port}`]) {
      for (const path of ['/console', '/console/', '/console/api/session', '/console/api/config']) {
        const res = await send(`${local}${path}`, { headers: { host } });
        expect({ path, host, status: res.status }).toStrictEqual({ path, host, status: 404 });
      }
      expect((await send(`${local}/authentication/v1/.well-known/jwks.json`, { headers: { host } })).status).toBe(200);
      const token = await send(`${local}/authentication/v1/tokens`, {
        method: 'POST', headers: { ...tokenHeaders(iam.mintIdpToken('alice'), 'dev'), host }, body: JSON.stringify(TOKEN_REQUEST),
      });
      expect(token.status).toBe(200);
      expect(token.body).toMatch(/^eyJ/);
    }
    // The Host rule still holds there.
    expect((await send(`${local}/authentication/v1/.well-known/jwks.json`, { headers: { host: `evil.example:${port}` } })).status).toBe(403);
  });

  test('console: true turns it on, answering to the bound address, loopback names and IP literals of its port', async () => {
    const { iam, local, port } = await start({ console: true });
    expect(iam.consoleUrl).toBe(`${iam.baseUrl}/console`);
    for (const host of [`127.0.0.1:${port}`, `192.0.2.10:${port}`, `localhost:${port}`]) {
      const res = await send(`${local}/console/api/session`, { headers: { host } });
      expect({ host, status: res.status }).toStrictEqual({ host, status: 200 });
    }
    expect((await send(`${local}/console/api/session`, { headers: { host: `evil.example:${port}` } })).status).toBe(403);
  });

  test('on loopback the console stays on by default', async () => {
    const iam = await startDevIam({ config: config() });
    running.push(iam);
    expect((await send(`${iam.baseUrl}/console/api/session`)).status).toBe(200);
  });
});
