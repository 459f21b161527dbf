/**
 * `iam-authz dev-server` keeps watching its config file through any mix of console saves (atomic
 * rename) and editor saves (temporary file renamed over it, or written in place).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { DevIamConfig } from '../../src/index.js';
import { ConsoleClient, exampleConfig } from '../console/support.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let file: string;
let child: ChildProcess;
let output = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'iam-authz-watch-'));
  file = join(dir, 'iam.json');
  await writeFile(file, JSON.stringify(await exampleConfig(), null, 2));
  child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'dev-server', '--config', file, '--port', '0'], { cwd: root });
  child.stdout?.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { output += d.toString(); });
});

afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

async function started(): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const match = /development IAM on (http:\/\/127\.0\.0\.1:\d+)[\s\S]*watching/.exec(output);
    if (match) return match[1]!;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`dev-server did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function roleKeys(baseUrl: string): Promise<string[]> {
  const idp = await (await fetch(`${baseUrl}/dev-idp/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"subject":"alice"}' })).text();
  const res = await fetch(`${baseUrl}/authentication/v1/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${idp}`, 'idp-key': 'dev', accept: 'application/jwt', 'content-type': 'application/json' },
    body: JSON.stringify({ tenantId: 'tenant-1', expiryInSecs: 600, tokenFormat: 't1' }),
  });
  const policy = await fetch(`${baseUrl}/policy/v1/roles`, { headers: { authorization: `Bearer ${await res.text()}` } });
  return ((await policy.json()) as { roles: { key: string }[] }).roles.map((r) => r.key);
}

/** Polls the policy API until role `key` is in force; a generous deadline for a loaded machine. */
async function inForce(baseUrl: string, key: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await roleKeys(baseUrl)).includes(key)) {
    if (Date.now() > deadline) throw new Error(`role ${key} not in force; dev-server output: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function editorSave(change: (config: DevIamConfig) => void, how: 'rename' | 'in-place'): Promise<void> {
  const config = JSON.parse(await readFile(file, 'utf8')) as DevIamConfig;
  change(config);
  const text = JSON.stringify(config, null, 2);
  if (how === 'in-place') {
    await writeFile(file, text);
    return;
  }
  const temp = join(dir, '.iam.json.swp');
  await writeFile(temp, text);
  await rename(temp, file);
}

test('every save is in force, in any mix of console saves and editor saves, and none gets a 409', { timeout: 90_000 }, async () => {
  const baseUrl = await started();
  const client = await new ConsoleClient(baseUrl).open();
  const addRole = (key: string) => (config: DevIamConfig): void => { config.applications[0]!.roles.push({ key, permissions: {} }); };
  const consoleSave = async (key: string): Promise<void> => {
    const { etag, config } = await client.config();
    addRole(key)(config);
    const res = await client.put(config, etag);
    expect(res.status, res.body).toBe(200);
  };
  const steps: [string, () => Promise<void>][] = [
    ['C1', () => consoleSave('C1')],
    ['E1', () => editorSave(addRole('E1'), 'rename')],
    ['C2', () => consoleSave('C2')],
    ['E2', () => editorSave(addRole('E2'), 'rename')],
    ['C3', () => consoleSave('C3')],
    ['E3', () => editorSave(addRole('E3'), 'in-place')],
    ['C4', () => consoleSave('C4')],
    ['E4', () => editorSave(addRole('E4'), 'rename')],
  ];
  for (const [key, save] of steps) {
    await save();
    await inForce(baseUrl, key);
  }
  expect(await roleKeys(baseUrl)).toEqual(expect.arrayContaining(['C1', 'E1', 'C2', 'E2', 'C3', 'E3', 'C4', 'E4']));
});

test('the start banner lists the console, the dev IdP, and a token line and curl line that work as printed', { timeout: 60_000 }, async () => {
  const baseUrl = await started();
  expect(output).toContain(`console      ${baseUrl}/console`);
  expect(output).toContain(`dev IdP      POST ${baseUrl}/dev-idp/token`);
  const token = /try {10}(TOKEN=\$\(npx iam-authz token [^\n]*\))\n/.exec(output)?.[1];
  const curl = /\n {15}(curl -H "Authorization: Bearer \$TOKEN" [^\n]*)\n/.exec(output)?.[1];
  expect(token).toBe(`TOKEN=$(npx iam-authz token --iam ${baseUrl} --actor actor-alice --tenant tenant-1)`);
  expect(curl).toBe(`curl -H "Authorization: Bearer $TOKEN" ${baseUrl}/policy/v1/roles`);
  // Run as printed (the local CLI standing in for npx): the policy of the actor's application.
  const script = `${token!.replace('npx iam-authz', `"${process.execPath}" --import tsx src/cli/main.ts`)} && ${curl!.replace('curl ', 'curl -sS ')}`;
  const body = await new Promise<string>((resolve, reject) => {
    execFile('sh', ['-c', script], { cwd: root, timeout: 30_000 }, (error, stdout, stderr) => { if (error) reject(new Error(stderr)); else resolve(stdout); });
  });
  expect((JSON.parse(body) as { changeId: string }).changeId).toEqual(expect.any(String));
});
