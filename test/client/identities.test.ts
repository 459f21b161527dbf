/**
 * More than one identity (issue #9 §9): `getToken({ …, idpToken })` exchanges the IdP token given
 * for this call, and caches the IAM token under a key that includes a hash of it, so a different
 * identity never receives another's token. Against the development IAM on loopback.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { IamTokenClient } from '../../src/client/index.js';
import { startDevIam, type DevIam } from 'iam-authz-dev';
import { decodePayload } from './harness.js';

let iam: DevIam;
beforeAll(async () => {
  iam = await startDevIam({ config: fileURLToPath(new URL('../../examples/vehicle-service/iam.json', import.meta.url)), console: false });
});
afterAll(async () => { await iam.close(); });

const sub = (token: string) => (decodePayload(token) as { sub: string }).sub;

describe('per-call identities', () => {
  test('each IdP token gets its own IAM token; a repeat is served from the cache', async () => {
    const client = new IamTokenClient({ baseUrl: iam.baseUrl, idpKey: 'dev' });
    try {
      const aliceIdp = iam.mintIdpToken('alice');
      const bobIdp = iam.mintIdpToken('bob');
      const [a1, b1] = await Promise.all([
        client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600, idpToken: aliceIdp }),
        client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600, idpToken: () => Promise.resolve(bobIdp) }),
      ]);
      expect(sub(a1)).toBe('actor-alice');
      expect(sub(b1)).toBe('actor-bob');
      expect(await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600, idpToken: aliceIdp })).toBe(a1);
      expect(await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600, idpToken: bobIdp })).toBe(b1);
    } finally {
      await client.close();
    }
  });

  test('the client\'s own identity and a caller\'s never share a cache entry', async () => {
    const serviceIdp = iam.mintIdpToken('bob');
    const client = new IamTokenClient({ baseUrl: iam.baseUrl, idpKey: 'dev', idpToken: () => Promise.resolve(serviceIdp) });
    try {
      const own = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600 });
      const alice = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600, idpToken: iam.mintIdpToken('alice') });
      expect(sub(own)).toBe('actor-bob');
      expect(sub(alice)).toBe('actor-alice');
      expect(await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600 })).toBe(own);
    } finally {
      await client.close();
    }
  });

  test('no identity at all is a TypeError; a bad per-call IdP token is a 401 before any request', async () => {
    const client = new IamTokenClient({ baseUrl: iam.baseUrl, idpKey: 'dev' });
    try {
      await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600 })).rejects.toThrow(TypeError);
      await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600, idpToken: 'Bearer x' })).rejects.toMatchObject({ code: 'ERR_TOKEN_EXCHANGE_FAILED', status: 401 });
      await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600, idpToken: () => Promise.reject(new Error('no session')) })).rejects.toMatchObject({ status: 401 });
      await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600, idpToken: 5 as never })).rejects.toThrow(/"idpToken" must be a string or a function/);
    } finally {
      await client.close();
    }
  });
});
