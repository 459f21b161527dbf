/**
 * Development signing keys kept in a file (issue #15 §5): a restarted development IAM signs with
 * and publishes the same keys, so tokens minted before the restart still verify; the file is
 * private (0600), rotations are saved, and a file that is not a key file is a clear error.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createAuthorizer } from '../../src/index.js';
import { DevKeyFileError, startDevIam, type DevIam } from '../../src/testing/index.js';
import { exampleConfig } from './support.js';

let dir: string;
let file: string;
const running: DevIam[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'iam-keys-'));
  file = join(dir, '.dev-keys.json');
});
afterEach(async () => {
  for (const iam of running.splice(0)) await iam.close();
  await rm(dir, { recursive: true, force: true });
});
const start = async () => {
  const iam = await startDevIam({ config: exampleConfig('http://127.0.0.1:9/jwks'), keyFile: file, console: false });
  running.push(iam);
  return iam;
};
const jwksOf = async (iam: DevIam) => (await fetch(`${iam.issuer}/.well-known/jwks.json`)).json() as Promise<{ keys: { kid: string; n: string }[] }>;

describe('keyFile', () => {
  test('a restart keeps the keys: a token minted before it verifies against the JWKS after it', async () => {
    const first = await start();
    const token = first.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
    const before = await jwksOf(first);
    await first.close();
    running.length = 0;
    const second = await start();
    expect(await jwksOf(second)).toStrictEqual(before);
    // The issuer names the port, which may differ: verify against the new instance's keys and the old issuer.
    const authorizer = createAuthorizer({ issuer: first.issuer, jwksUri: `${second.issuer}/.well-known/jwks.json` });
    try {
      expect((await authorizer.authenticate(`Bearer ${token}`)).claims.sub).toBe('actor-alice');
    } finally {
      await authorizer.close();
    }
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toStrictEqual(['.dev-keys.json']);
  });

  test('a rotation is saved: the next start signs with the new key', async () => {
    const iam = await start();
    const kid = iam.rotateKeys();
    const saved = JSON.parse(await readFile(file, 'utf8')) as { keys: { kid: string }[] };
    expect(saved.keys.map((k) => k.kid)[0]).toBe(kid);
    await iam.close();
    running.length = 0;
    const again = await start();
    const token = again.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).toMatchObject({ kid });
  });

  test.each([
    ['not JSON', 'not json'],
    ['not a key file', '{"keys": []}'],
    ['a public key only', '{"keys": [{"kty":"RSA","kid":"k","n":"AQAB","e":"AQAB"}], "idpKey": {"kty":"RSA","kid":"i","n":"AQAB","e":"AQAB"}}'],
  ])('%s: a DevKeyFileError naming the file, and the file is left alone', async (_name, text) => {
    await writeFile(file, text);
    await expect(start()).rejects.toThrow(DevKeyFileError);
    await expect(start()).rejects.toThrow(file);
    expect(await readFile(file, 'utf8')).toBe(text);
  });
});
