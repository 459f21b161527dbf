/**
 * The console's saves to the config file are atomic: a reader never sees half a file, a failed save
 * leaves the old file and the old config in force, and no temporary file is left behind.
 */
import { execFile, spawn } from 'node:child_process';
import { chmod, lstat, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DevIamConfig } from '../../src/config.js';
import { writeFileAtomic } from '../../src/console/save-file.js';
import { startDevIam } from '../../src/dev-iam.js';
import { ConsoleClient, exampleConfig, problemOf, startConsoleEnv, type ConsoleEnv } from './support.js';

let env: ConsoleEnv | undefined;

/** Runs a command; true when it exited 0. */
const run = (cmd: string, args: string[]) => new Promise<boolean>((resolve) => { execFile(cmd, args, (error) => { resolve(error === null); }); });
afterEach(async () => { await env?.close(); env = undefined; });

describe('atomic save', () => {
  it('writes the new config, keeps other top-level members and the file mode, leaves no temporary file', async () => {
    const config = await exampleConfig();
    env = await startConsoleEnv({ text: JSON.stringify({ $comment: 'kept by the console', ...config }) });
    await chmod(env.file!, 0o600);
    const { etag } = await env.client.config();
    config.applications[0]!.roles[0]!.permissions['vehicle-service'] = ['READ', 'WRITE'];
    expect((await env.client.put(config, etag)).status).toBe(200);
    expect(JSON.parse(await readFile(env.file!, 'utf8'))).toStrictEqual({ $comment: 'kept by the console', ...config });
    expect((await stat(env.file!)).mode & 0o777).toBe(0o600);
    expect(await readdir(env.dir)).toStrictEqual(['iam.json']);
  });

  it('keeps a 0644 file 0644 under a restrictive umask (the umask applies to a new file\'s mode)', async () => {
    env = await startConsoleEnv();
    await chmod(env.file!, 0o644);
    const previous = process.umask(0o077);
    try {
      await writeFileAtomic(env.file!, '{}');
    } finally {
      process.umask(previous);
    }
    expect((await stat(env.file!)).mode & 0o777).toBe(0o644);
  });

  it('saves through a symlink to its target, keeping the link', async () => {
    const config = await exampleConfig();
    env = await startConsoleEnv();
    const target = join(env.dir, 'real.json');
    const link = join(env.dir, 'link.json');
    await writeFile(target, JSON.stringify(config));
    await symlink(target, link);
    const iam = await startDevIam({ config: link });
    try {
      const client = await new ConsoleClient(iam.baseUrl).open();
      const { etag } = await client.config();
      config.applications[0]!.roles.push({ key: 'GUEST', permissions: {} });
      expect((await client.put(config, etag)).status).toBe(200);
      expect((await lstat(link)).isSymbolicLink()).toBe(true);
      expect(JSON.parse(await readFile(target, 'utf8')).applications[0].roles[2].key).toBe('GUEST');
    } finally {
      await iam.close();
    }
  });

  it('a save that cannot be written answers 500, keeps the config in force and removes its temporary file', async () => {
    env = await startConsoleEnv();
    const { etag, config } = await env.client.config();
    const policyBefore = env.iam.policyOf('app-1');
    const before = await readFile(env.file!, 'utf8');
    // An immutable file (even root cannot rename over it): the temporary file is written, the rename fails.
    const immutable = await run('chattr', ['+i', env.file!]);
    if (!immutable) {
      console.warn('skipped: chattr +i is not supported here');
      return;
    }
    try {
      config.applications[0]!.roles[0]!.permissions['vehicle-service'] = ['READ', 'WRITE'];
      const res = await env.client.put(config, etag);
      expect(res.status).toBe(500);
      expect(problemOf(res).detail).toMatch(/could not be saved \(E[A-Z]+\); nothing was changed/);
      expect(env.iam.policyOf('app-1')).toStrictEqual(policyBefore);
      expect((await env.client.config()).etag).toBe(etag);
      expect(await readdir(env.dir)).toStrictEqual(['iam.json']);
      expect(await readFile(env.file!, 'utf8')).toBe(before);
    } finally {
      await run('chattr', ['-i', env.file!]);
    }
  });

  it('does not overwrite a hand edit of the file that was not reloaded (409), nor a file that is gone or broken', async () => {
    env = await startConsoleEnv();
    const { etag, config } = await env.client.config();
    const edited = structuredClone(config);
    edited.actors[0]!.account = 'acc-by-hand';
    await writeFile(env.file!, JSON.stringify(edited));
    config.applications[0]!.roles[0]!.permissions['vehicle-service'] = ['READ', 'WRITE'];
    const res = await env.client.put(config, etag);
    expect(res.status).toBe(409);
    expect(problemOf(res).detail).toMatch(/on disk differs/);
    expect(JSON.parse(await readFile(env.file!, 'utf8'))).toStrictEqual(edited);
    await writeFile(env.file!, '{ "idps": [');
    expect((await env.client.put(config, etag)).status).toBe(409);
    await rm(env.file!);
    await mkdir(join(env.file!, 'blocker'), { recursive: true });
    expect((await env.client.put(config, etag)).status).toBe(409);
    expect(await readdir(env.dir)).toStrictEqual(['iam.json']);
    // Reloaded (as the dev-server does on a change), the hand edit is the new base.
    await rm(env.file!, { recursive: true });
    await writeFile(env.file!, JSON.stringify(edited));
    env.iam.setConfig(env.file!);
    const current = await env.client.config();
    expect(current.config.actors[0]!.account).toBe('acc-by-hand');
    expect((await env.client.put(current.config, current.etag)).status).toBe(200);
  });

  it('writeFileAtomic removes its temporary file when the rename fails', async () => {
    env = await startConsoleEnv({ memory: true });
    const target = join(env.dir, 'dir-in-the-way');
    await mkdir(join(target, 'x'), { recursive: true });
    await expect(writeFileAtomic(target, '{}')).rejects.toMatchObject({ code: expect.stringMatching(/^E/) });
    expect(await readdir(env.dir)).toStrictEqual(['dir-in-the-way']);
  });

  it('a reader polling the file during many saves only ever sees a whole old or a whole new config', async () => {
    // ~200 KB of actors, so that a non-atomic write (truncate, then write) would be seen half-done.
    const base = await exampleConfig();
    const many = (role: string): DevIamConfig => ({
      ...base,
      actors: [...base.actors, ...Array.from({ length: 700 }, (_, i) => ({
        id: `actor-${i}`, idp: 'dev', subject: `s-${i}`, account: 'acc-9', application: 'app-1',
        tenants: { 'tenant-1': [{ r: [role], c: [`VIN=${'V'.repeat(40)}${i}`] }] },
      }))],
    });
    const a = many('DRIVER');
    const b = many('OWNER');
    env = await startConsoleEnv({ config: a });
    const reader = spawn(process.execPath, ['-e', `
      const fs = require('node:fs');
      let reads = 0, bad = 0, kinds = new Set();
      const until = Date.now() + Number(process.argv[2]);
      while (Date.now() < until) {
        try {
          const c = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
          kinds.add(c.actors.length + ':' + c.actors[3].tenants['tenant-1'][0].r[0]);
          reads++;
        } catch { bad++; }
      }
      process.stdout.write(JSON.stringify({ reads, bad, kinds: [...kinds] }));
    `, env.file!, '2500'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    reader.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    const done = new Promise<void>((resolve) => reader.on('close', () => { resolve(); }));
    let etag = (await env.client.config()).etag;
    let saves = 0;
    const started = Date.now();
    while (Date.now() - started < 2000) {
      const res = await env.client.put(saves % 2 === 0 ? b : a, etag);
      expect(res.status).toBe(200);
      etag = res.headers.etag!;
      saves += 1;
    }
    await done;
    const result = JSON.parse(out) as { reads: number; bad: number; kinds: string[] };
    expect(saves).toBeGreaterThan(5);
    expect(result.reads).toBeGreaterThan(10);
    expect(result.bad).toBe(0);
    expect(result.kinds.sort()).toStrictEqual(['703:DRIVER', '703:OWNER']);
    expect(await readdir(env.dir)).toStrictEqual(['iam.json']);
  });
});
