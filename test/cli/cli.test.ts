/** The `iam-authz` command, run as a real process against a real development IAM. */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startDevIam, type DevIam, type DevIamConfig } from '../../src/testing/index.js';
import { describeToken, relative } from '../../src/cli/decode.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let iam: DevIam;
let alice: string;

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: root, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  const config = JSON.parse(await readFile(new URL('../../examples/vehicle-service/iam.json', import.meta.url), 'utf8')) as DevIamConfig;
  iam = await startDevIam({ config });
  alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
});
afterAll(async () => { await iam.close(); });

test('decode prints header, claims, ars and expiry, and says it did not verify', () => {
  const nowMs = Date.now();
  const out = describeToken(alice, nowMs);
  expect(out).toMatch(/^NOT VERIFIED/);
  expect(out).toContain('"actor-alice"');
  expect(out).toMatch(/1\s+DRIVER\s+VIN=WVW1/);
  expect(out).toMatch(/expires in 60 minutes/);
  const expired = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { exp: Math.floor(nowMs / 1000) - 7200 } });
  expect(describeToken(expired, nowMs)).toMatch(/EXPIRED 2 hours ago/);
  expect(() => describeToken('nope', nowMs)).toThrow(/compact JWS/);
  // A payload 100,000 levels deep is refused with a message, not a RangeError from printing it.
  const deep = `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(`{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`).toString('base64url')}.c2ln`;
  expect(() => describeToken(deep, nowMs)).toThrow(/nested deeper than 32 levels/);
  expect(relative(-1000)).toBe('1 second ago');
  expect(relative(3 * 86_400_000)).toBe('in 3 days');
});

test('explain: granted exits 0, denied exits 3 with the reason, bad token exits 1', async () => {
  const base = ['explain', '--token', alice, '--service', 'vehicle-service', '--resource', 'VIN=WVW1', '--iam', iam.baseUrl];
  const [read, write, bad] = await Promise.all([
    cli(...base, '--permission', 'READ'),
    cli(...base, '--permission', 'WRITE'),
    cli('explain', '--token', 'a.b.c', '--service', 's', '--permission', 'p', '--resource', 'VIN=1', '--iam', iam.baseUrl),
  ]);
  expect(read.code).toBe(0);
  expect(read.stdout).toContain('GRANTED');
  expect(write.code).toBe(3);
  expect(write.stdout).toContain('PERMISSION_NOT_GRANTED');
  expect(write.stdout).toMatch(/^held {5}READ \(DRIVER\)$/m); // what the token does hold there
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('ERR_TOKEN_INVALID');
});

test('usage errors exit 2 and print help; --help for each command', async () => {
  const commands = ['dev-server', 'decode', 'explain'];
  const [missing, unknown, ...helps] = await Promise.all([cli('explain', '--token', alice), cli('nope'), ...commands.map((c) => cli(c, '--help'))]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('usage: iam-authz explain');
  expect(unknown.code).toBe(2);
  helps.forEach((help, i) => {
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(`usage: iam-authz ${commands[i]!}`);
  });
});

test('--version prints the package version and exits 0', async () => {
  const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  for (const flag of ['--version', '-v']) {
    const out = await cli(flag);
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe(version);
  }
});
