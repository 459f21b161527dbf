/** `iam-authz token`: mints a token from a running development IAM over HTTP and prints only it. */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startDevIam, type DevIam, type DevIamConfig } from '../../src/index.js';
import { runCli, type CliRun } from '../support.js';

let iam: DevIam;

function cli(...args: string[]): Promise<CliRun> {
  return runCli(args);
}

function claims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

beforeAll(async () => {
  const config = JSON.parse(await readFile(new URL('../../../../examples/vehicle-service/iam.json', import.meta.url), 'utf8')) as DevIamConfig;
  config.idps.push({ key: 'corp', issuer: 'https://idp.example', jwks: { keys: [] } });
  config.actors.push({ id: 'actor-carol', idp: 'corp', subject: 'carol', account: 'acc-1', application: 'app-1', tenants: { 'tenant-1': [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] } });
  iam = await startDevIam({ config });
});
afterAll(async () => { await iam.close(); });

test('prints only the minted token on stdout, for the actor and tenant, valid at the policy API', async () => {
  const out = await cli('token', '--iam', iam.baseUrl, '--actor', 'actor-bob', '--tenant', 'tenant-1');
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  expect(out.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
  const token = out.stdout.trim();
  expect(claims(token)).toMatchObject({ iss: iam.issuer, sub: 'actor-bob', tid: 'tenant-1', ars: [{ r: ['OWNER'], c: ['VIN=WVW1'] }] });
  const c = claims(token) as { iat: number; exp: number };
  expect(c.exp - c.iat).toBe(3600);
  const policy = await fetch(`${iam.baseUrl}/policy/v1/roles`, { headers: { authorization: `Bearer ${token}` } });
  expect(policy.status).toBe(200);
});

test('--expiry sets the lifetime in seconds; a bad one is a usage error', async () => {
  const out = await cli('token', '--iam', `${iam.baseUrl}/`, '--actor', 'actor-alice', '--tenant', 'tenant-1', '--expiry', '60');
  expect(out.code).toBe(0);
  const c = claims(out.stdout.trim()) as { iat: number; exp: number };
  expect(c.exp - c.iat).toBe(60);
  const bad = await cli('token', '--iam', iam.baseUrl, '--actor', 'actor-alice', '--tenant', 'tenant-1', '--expiry', '1.5');
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--expiry must be a whole number of seconds');
});

test('errors go to stderr, exit non-zero, name what failed, and print no token', async () => {
  const unknown = await cli('token', '--iam', iam.baseUrl, '--actor', 'actor-mallory', '--tenant', 'tenant-1');
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('no actor "actor-mallory"');
  expect(unknown.stderr).toContain('actor-alice, actor-bob');

  const tenant = await cli('token', '--iam', iam.baseUrl, '--actor', 'actor-alice', '--tenant', 'tenant-2');
  expect(tenant.code).toBe(1);
  expect(tenant.stderr).toContain('tenant "tenant-2" is not one of actor "actor-alice"\'s tenants: tenant-1');

  const external = await cli('token', '--iam', iam.baseUrl, '--actor', 'actor-carol', '--tenant', 'tenant-1');
  expect(external.code).toBe(1);
  expect(external.stderr).toContain('signs in with IdP "corp", not the built-in one');

  // A port nobody listens on: taken, then released.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = server.address() as { port: number };
      server.close(() => { resolve(p); });
    });
  });
  const down = await cli('token', '--iam', `http://127.0.0.1:${port}`, '--actor', 'actor-alice', '--tenant', 'tenant-1');
  expect(down.code).toBe(1);
  expect(down.stderr).toContain(`cannot reach the development IAM at http://127.0.0.1:${port}`);

  for (const out of [unknown, tenant, external, down]) {
    expect(out.stdout).toBe('');
    expect(out.stderr).not.toMatch(/eyJ/);
  }
});

test('refuses a non-loopback --iam unless --allow-remote, before any request', async () => {
  const out = await cli('token', '--iam', 'http://192.0.2.1:4000', '--actor', 'actor-alice', '--tenant', 'tenant-1');
  expect(out.code).toBe(2);
  expect(out.stderr).toContain('is not a loopback address');
  expect(out.stderr).toContain('--allow-remote');
  const missing = await cli('token', '--iam', iam.baseUrl, '--tenant', 'tenant-1');
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('--actor is required');
});

test('--help names the command and its options; the top-level help lists it', async () => {
  const help = await cli('token', '--help');
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('usage: iam-authz token --iam URL --actor ID --tenant ID');
  expect(help.stdout).toContain('TOKEN=$(iam-authz token');
  expect((await cli('--help')).stdout).toMatch(/token\s+mint a token for an actor/);
});
