/** `iam-authz dev-server`: a real process serving the config file, reloading it when it changes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { DevIamConfig } from '../../src/testing/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let file: string;
let config: DevIamConfig;
let child: ChildProcess;
let output = '';

/** Resolves once the process has printed something matching `pattern` (since `from`). */
function waitFor(pattern: RegExp, from = 0): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`timed out waiting for ${String(pattern)}; output: ${output}`)); }, 20_000);
    const check = (): void => {
      const match = output.slice(from).match(pattern);
      if (!match) return;
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      resolve(match);
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
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
  config = JSON.parse(await readFile(new URL('../../examples/vehicle-service/iam.json', import.meta.url), 'utf8')) as DevIamConfig;
  await writeFile(file, JSON.stringify(config));
  child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'dev-server', '--config', file, '--port', '0'], { cwd: root });
  child.stdout?.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { output += d.toString(); });
});

afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
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
