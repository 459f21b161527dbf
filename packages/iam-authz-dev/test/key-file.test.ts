/**
 * Development signing keys kept in a file (issue #15 §5): a restarted development IAM signs with
 * and publishes the same keys, so tokens minted before the restart still verify; the file is
 * private (0600), rotations are saved, and a file that is not a key file is a clear error.
 */
import { chmodSync, chownSync, lstatSync, mkdirSync, symlinkSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createAuthorizer } from 'iam-authz';
import { DevKeyFileError, startDevIam, type DevIam } from '../src/index.js';
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

  describe('refused like ssh refuses a key file, checked before reading, the file left unchanged', () => {
    /** A valid key file written by a first start. */
    const keyFileOnDisk = async (path = file) => {
      const iam = await startDevIam({ config: exampleConfig('http://127.0.0.1:9/jwks'), keyFile: path, console: false });
      await iam.close();
      return readFile(path, 'utf8');
    };
    const refusal = async () => {
      const error = await start().then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(DevKeyFileError);
      expect((error as Error).message).toContain(file);
      return (error as Error).message;
    };

    test.runIf(process.getuid?.() === 0)('owned by another user (chown 65534)', async () => {
      const text = await keyFileOnDisk();
      chownSync(file, 65_534, 65_534);
      expect(await refusal()).toMatch(/owned by uid 65534, not by this process's user \(uid 0\)/);
      expect(await readFile(file, 'utf8')).toBe(text);
      expect(lstatSync(file).uid).toBe(65_534);
    });

    test.each([['group-writable', 0o620], ['world-writable', 0o602], ['group- and world-writable', 0o666]])('%s', async (_name, mode) => {
      const text = await keyFileOnDisk();
      chmodSync(file, mode);
      expect(await refusal()).toMatch(new RegExp(`is group- or world-writable \\(mode 0${mode.toString(8)}\\)`));
      expect(await readFile(file, 'utf8')).toBe(text);
      expect(lstatSync(file).mode & 0o777).toBe(mode);
    });

    test('a symbolic link, even to a good key file', async () => {
      const target = join(dir, 'real-keys.json');
      const text = await keyFileOnDisk(target);
      symlinkSync(target, file);
      expect(await refusal()).toMatch(/is a symbolic link/);
      expect(lstatSync(file).isSymbolicLink()).toBe(true);
      expect(await readFile(target, 'utf8')).toBe(text);
    });

    test('a dangling symbolic link is refused too, and nothing is created through it', async () => {
      const target = join(dir, 'nowhere.json');
      symlinkSync(target, file);
      expect(await refusal()).toMatch(/is a symbolic link/);
      expect(await readdir(dir)).toStrictEqual(['.dev-keys.json']);
    });

    // ssh's rule: any access for group or others. Root too: the mode is checked whoever runs.
    test.each([
      ['0644, world-readable', 0o644], ['0640, group-readable', 0o640], ['0604, readable by others only', 0o604],
      ['0444, read-only but world-readable', 0o444], ['0610, group-executable only', 0o610], ['0701, world-executable only', 0o701],
    ])('%s: the mode named, with chmod 600 and a fresh start as remedies', async (_name, mode) => {
      const text = await keyFileOnDisk();
      chmodSync(file, mode);
      const message = await refusal();
      expect(message).toContain(`: is open to group or others (mode 0${mode.toString(8)}); its private keys may already have been read`);
      expect(message).toContain('run chmod 600 on it if no one else can have read it, or delete it to start with new keys');
      expect(await readFile(file, 'utf8')).toBe(text);
      expect(lstatSync(file).mode & 0o777).toBe(mode);
    });

    // Only root can open a file its owner has no access to: elsewhere the open fails first.
    test.runIf(process.getuid?.() === 0)('0044 (nothing for the owner): the mode in four digits, as ssh prints it', async () => {
      await keyFileOnDisk();
      chmodSync(file, 0o044);
      expect(await refusal()).toContain('is open to group or others (mode 0044)');
    });

    test('a directory at the path', async () => {
      mkdirSync(file);
      expect(await refusal()).toMatch(/is not a regular file/);
    });
  });

  describe('modes that are the owner\'s alone are used', () => {
    test.each([['0600', 0o600], ['read-only for the owner (0400)', 0o400], ['0700', 0o700]])('%s', async (_name, mode) => {
      const first = await start();
      const kid = first.rotateKeys();
      await first.close();
      running.length = 0;
      chmodSync(file, mode);
      const again = await start();
      expect(JSON.parse(Buffer.from(again.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' }).split('.')[0]!, 'base64url').toString()) as { kid: string }).toMatchObject({ kid });
    });

    test('created 0600 even under a umask that lets everyone read (000), and used again', async () => {
      const previous = process.umask(0o000);
      try {
        const first = await start();
        first.rotateKeys();
      } finally {
        process.umask(previous);
      }
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      await expect(start()).resolves.toBeDefined();
    });
  });
});
