/**
 * The exchange itself against a real loopback token endpoint: method, path, every header of spec
 * §4.1 (including the reference client's cache headers), the §2.1 body, and the token handed back.
 */
import { describe, expect, test } from 'vitest';
import { IamTokenClient, TokenExchangeError } from '../../src/client/index.js';
import { isIamAuthzError } from '../../src/index.js';
import { countingIdp, decodePayload, TOKEN_PATH, useTokenServer } from './harness.js';

const ctx = useTokenServer();

describe('the exchange request (spec §4.1)', () => {
  test('POSTs to {baseUrl}/authentication/v1/tokens with every header and the §2.1 body', async () => {
    const idp = countingIdp();
    const client = ctx.client(idp.idpToken);
    const token = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });

    expect(ctx.server.seen).toHaveLength(1);
    const [req] = ctx.server.seen;
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe(TOKEN_PATH);
    expect(req!.headers.authorization).toBe('Bearer idp-token-1');
    expect(req!.headers['idp-key']).toBe('corp');
    expect(req!.headers.accept).toBe('application/jwt');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['cache-control']).toBe('no-store, no-cache, must-revalidate');
    expect(req!.headers['if-modified-since']).toBe('0');
    expect(req!.headers['content-length']).toBe(String(Buffer.byteLength(req!.body)));
    expect(JSON.parse(req!.body)).toStrictEqual({ tenantId: 'tenant-1', expiryInSecs: 3600, tokenFormat: 't1' });

    // The answer is handed back as is: the compact JWS the IAM signed.
    expect(token.split('.')).toHaveLength(3);
    const payload = decodePayload(token);
    expect(payload).toMatchObject({ aud: 'tenant-1', tid: 'tenant-1' });
    expect((payload.exp as number) - (payload.iat as number)).toBe(3600);
  });

  test('a base URL with a path prefix and trailing slashes', async () => {
    const client = ctx.clients.make({ baseUrl: `${ctx.server.url}/iam//`, idpKey: 'corp', idpToken: countingIdp().idpToken, now: ctx.clock.now });
    ctx.server.handler = (_req, res) => { res.writeHead(404); res.end(); };
    await expect(client.getToken({ tenantId: 't', expiryInSecs: 60 })).rejects.toMatchObject({ status: 404 });
    expect(ctx.server.seen[0]!.url).toBe(`/iam${TOKEN_PATH}`);
  });

  test('the body carries tenant ids verbatim (JSON-escaped), and the answer tolerates a trailing newline', async () => {
    const tenantId = 'ténant "2"/\\x';
    ctx.server.handler = (req, res) => {
      const { tenantId: t } = JSON.parse(req.body) as { tenantId: string };
      expect(t).toBe(tenantId);
      res.writeHead(200, { 'content-type': 'application/jwt' });
      res.end('eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjQxMDI0NDQ4MDB9.c2ln\n');
    };
    const client = ctx.client(countingIdp().idpToken);
    await expect(client.getToken({ tenantId, expiryInSecs: 60 })).resolves.toBe('eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjQxMDI0NDQ4MDB9.c2ln');
  });

  test('any 2xx carrying a token is a success (the spec does not name the status)', async () => {
    ctx.server.handler = (_req, res) => {
      res.writeHead(201, { 'content-type': 'application/jwt' });
      res.end('eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjQxMDI0NDQ4MDB9.c2ln');
    };
    const client = ctx.client(countingIdp().idpToken);
    await expect(client.getToken({ tenantId: 't', expiryInSecs: 60 })).resolves.toMatch(/^eyJ/);
  });

  test('each exchange asks idpToken() afresh: the IdP token is not kept by the client', async () => {
    const idp = countingIdp();
    const client = ctx.client(idp.idpToken);
    await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    await client.getToken({ tenantId: 'tenant-2', expiryInSecs: 3600 });
    expect(idp.calls()).toBe(2);
    expect(ctx.server.seen.map((r) => r.headers.authorization)).toStrictEqual(['Bearer idp-token-1', 'Bearer idp-token-2']);
  });

  test('an IAM refusal from the real server surfaces as TokenExchangeError, an IamAuthzError', async () => {
    ctx.server.handler = (_req, res) => {
      res.writeHead(401, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'IdP token signature is invalid' }));
    };
    const client = ctx.client(countingIdp().idpToken);
    const error = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenExchangeError);
    expect(isIamAuthzError(error)).toBe(true);
    expect(error).toMatchObject({ status: 401, code: 'ERR_TOKEN_EXCHANGE_FAILED' });
    expect((error as Error).message).toBe('token exchange for tenant "tenant-1" failed: the IAM answered HTTP 401');
    expect((error as TokenExchangeError).problem).toBe('Unauthorized: IdP token signature is invalid');
  });

  test('the default dispatcher (owned EnvHttpProxyAgent) works and is closed by close()', async () => {
    const client = new IamTokenClient({ baseUrl: ctx.server.url, idpKey: 'corp', idpToken: countingIdp().idpToken, now: ctx.clock.now });
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 })).resolves.toMatch(/^eyJ/);
    await expect(client.close()).resolves.toBeUndefined();
    await expect(client.close()).resolves.toBeUndefined();
  });
});
