/** `iam-authz dev-server`: a real process serving the config file, reloading it when it changes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { DevIamConfig } from '../../src/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let file: string;
let config: DevIamConfig;
let child: ChildProcess;
let output = '';
const others: ChildProcess[] = [];

/** A dev-server process and everything it printed. */
interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function devServer(args: string[]): Run {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'dev-server', ...args], { cwd: root });
  let text = '';
  proc.stdout.on('data', (d: Buffer) => { text += d.toString(); });
  proc.stderr.on('data', (d: Buffer) => { text += d.toString(); });
  others.push(proc);
  return { child: proc, output: () => text, exited: new Promise((resolve) => proc.once('exit', (code, signal) => { resolve(code ?? (signal as unknown as number)); })) };
}

/** Resolves once the process has printed something matching `pattern` (since `from`). */
function waitFor(pattern: RegExp, from = 0, run: Run = { child, output: () => output, exited: Promise.resolve(null) }): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`timed out waiting for ${String(pattern)}; output: ${run.output()}`)); }, 20_000);
    const check = (): void => {
      const match = run.output().slice(from).match(pattern);
      if (!match) return;
      clearTimeout(timer);
      run.child.stdout?.off('data', check);
      run.child.stderr?.off('data', check);
      resolve(match);
    };
    run.child.stdout?.on('data', check);
    run.child.stderr?.on('data', check);
    check();
  });
}

async function iamToken(baseUrl: string): Promise<string> {
  const idp = await (await fetch(`${baseUrl}/dev-idp/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"subject":"alice"}' })).text();
  const res = await fetch(`${baseUrl}/authentication/v1/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${idp}`, 'idp-key': 'dev', accept: 'application/jwt', 'content-type': 'application/json' },
    body: JSON.stringify({ tenantId: 'tenant-1', expiryInSecs: 600, tokenFormat: 't1' }),
  });
  expect(res.status).toBe(200);
  return res.text();
}

async function changeId(baseUrl: string, token: string): Promise<string> {
  const res = await fetch(`${baseUrl}/policy/v1/roles`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { changeId: string }).changeId;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'iam-authz-dev-server-'));
  file = join(dir, 'iam.json');
  config = JSON.parse(await readFile(new URL('../../../../examples/vehicle-service/iam.json', import.meta.url), 'utf8')) as DevIamConfig;
  await writeFile(file, JSON.stringify(config));
  child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'dev-server', '--config', file, '--port', '0'], { cwd: root });
  child.stdout?.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { output += d.toString(); });
});

afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  for (const proc of others) if (proc.exitCode === null) proc.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

test('serves the config, reloads it on change (new changeId), keeps the last good one on a bad file, stops on SIGINT', async () => {
  const [, baseUrl] = (await waitFor(/development IAM on (http:\/\/127\.0\.0\.1:\d+)/)) as [string, string];
  await waitFor(/watching/);
  const token = await iamToken(baseUrl);
  const first = await changeId(baseUrl, token);

  const granted = structuredClone(config);
  granted.applications[0]!.roles[0]!.permissions['vehicle-service'] = ['READ', 'WRITE'];
  let mark = output.length;
  await writeFile(file, JSON.stringify(granted));
  await waitFor(/config reloaded/, mark);
  const second = await changeId(baseUrl, token);
  expect(second).not.toBe(first);

  const bad = structuredClone(granted);
  bad.applications[0]!.roles[0]!.permissions['vehicle-service'] = ['READ', 'DELETE'];
  mark = output.length;
  await writeFile(file, JSON.stringify(bad));
  const [message] = await waitFor(/config not reloaded: .*/, mark);
  expect(message).toContain('applications[0].roles[0].permissions.vehicle-service[1]');
  expect(await changeId(baseUrl, token)).toBe(second);

  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { resolve(code); }));
  child.kill('SIGINT');
  expect(await exited).toBe(0);
});

// Each case starts one or two tsx processes: seconds each on a loaded machine.
describe('hardening', { timeout: 60_000 }, () => {
  // The first test leaves `file` broken on purpose; these start from a good copy.
  let good: string;
  beforeAll(async () => {
    good = join(dir, 'good.json');
    await writeFile(good, JSON.stringify(config));
  });

  test('--help says the console is off on a non-loopback --host unless --console, and documents --key-file', async () => {
    const run = devServer(['--help']);
    expect(await run.exited).toBe(0);
    expect(run.output()).toMatch(/--host H[\s\S]*console\s+is OFF unless --console/);
    expect(run.output()).toContain('--console        serve the console even on a non-loopback --host');
    expect(run.output()).toMatch(/--key-file FILE[\s\S]*symlink, another user's, or open to group\/others\s+\(as ssh requires of keys: 0600 or 0400\)/);
  });

  test('--host 0.0.0.0: the console is off (404) while the JWKS and token endpoints serve; --console turns it on', async () => {
    const off = devServer(['--config', good, '--port', '0', '--host', '0.0.0.0']);
    const [, port] = (await waitFor(/development IAM on http:\/\/0\.0\.0\.0:(\d+)/, 0, off)) as [string, string];
    await waitFor(/watching/, 0, off);
    const local = `http://127.0.0.1:${port}`;
    expect(off.output()).toContain('console      off');
    expect((await fetch(`${local}/console`)).status).toBe(404);
    expect((await fetch(`${local}/console/api/session`)).status).toBe(404);
    expect((await fetch(`${local}/authentication/v1/.well-known/jwks.json`)).status).toBe(200);
    expect(await iamToken(local)).toMatch(/^eyJ/);
    off.child.kill('SIGINT');
    expect(await off.exited).toBe(0);

    const on = devServer(['--config', good, '--port', '0', '--host', '0.0.0.0', '--console']);
    const [, portOn] = (await waitFor(/development IAM on http:\/\/0\.0\.0\.0:(\d+)/, 0, on)) as [string, string];
    await waitFor(/watching/, 0, on);
    expect(on.output()).toContain(`console      http://0.0.0.0:${portOn}/console`);
    expect((await fetch(`http://127.0.0.1:${portOn}/console/api/session`)).status).toBe(200);
    on.child.kill('SIGINT');
    expect(await on.exited).toBe(0);
  });

  test('--key-file: kept across restarts at 0600; a group-writable or world-readable one is refused with why, and left unchanged', async () => {
    const keyFile = `${dir}/keys.json`;
    const first = devServer(['--config', good, '--port', '0', '--key-file', keyFile]);
    const [, baseUrl] = (await waitFor(/development IAM on (http:\/\/127\.0\.0\.1:\d+)/, 0, first)) as [string, string];
    await waitFor(/watching/, 0, first);
    const kid = ((await (await fetch(`${baseUrl}/authentication/v1/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys[0]!.kid;
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const text = await readFile(keyFile, 'utf8');

    await chmod(keyFile, 0o664);
    const refused = devServer(['--config', good, '--port', '0', '--key-file', keyFile]);
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toContain(`key file ${keyFile}: is group- or world-writable (mode 0664)`);
    expect(await readFile(keyFile, 'utf8')).toBe(text);

    // Readable by others (ssh's "UNPROTECTED PRIVATE KEY FILE"): one line naming file, mode and remedy, no stack.
    await chmod(keyFile, 0o644);
    const readable = devServer(['--config', good, '--port', '0', '--key-file', keyFile]);
    expect(await Promise.race([readable.exited, waitFor(/watching/, 0, readable).then(() => 'started anyway')])).toBe(1);
    expect(readable.output()).toBe(`iam-authz dev-server: development IAM key file ${keyFile}: is open to group or others (mode 0644); its private keys may already have been read (run chmod 600 on it if no one else can have read it, or delete it to start with new keys)\n`);
    expect(await readFile(keyFile, 'utf8')).toBe(text);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o644);

    // Back to 0600: the same keys again.
    await chmod(keyFile, 0o600);
    const again = devServer(['--config', good, '--port', '0', '--key-file', keyFile]);
    const [, againUrl] = (await waitFor(/development IAM on (http:\/\/127\.0\.0\.1:\d+)/, 0, again)) as [string, string];
    await waitFor(/watching/, 0, again);
    expect(((await (await fetch(`${againUrl}/authentication/v1/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys[0]!.kid).toBe(kid);
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
  });

  test('null in the config file is the config error naming its path', async () => {
    const withNull = `${dir}/null.json`;
    const broken = structuredClone(config) as unknown as { actors: { tenants: Record<string, { c: unknown }[]> }[] };
    broken.actors[0]!.tenants['tenant-1']![0]!.c = null;
    await writeFile(withNull, JSON.stringify(broken));
    const run = devServer(['--config', withNull, '--port', '0']);
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('invalid dev IAM config at actors[0].tenants.tenant-1[0].c: must be an array (got null; leave the member out for the default)');
  });
});
