/**
 * Each framework example under examples/ runs as its own process (as `npm start` would, through
 * tsx; `iam-authz` resolves to this repository) against a development IAM, and guards
 * GET /vehicles/:vin: 200 with a token holding READ on that VIN, 401 without one, 403 for another VIN.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startDevIam, type DevIam, type DevIamConfig } from 'iam-authz-dev';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const examples = [
  { name: 'express', entry: 'server.ts' },
  { name: 'koa', entry: 'server.ts' },
  { name: 'fastify', entry: 'server.ts' },
  { name: 'hono', entry: 'server.ts' },
  { name: 'nestjs', entry: 'main.ts', tsconfig: 'examples/nestjs/tsconfig.json' },
];

let iam: DevIam;
beforeAll(async () => {
  const config = JSON.parse(await readFile(new URL('../../examples/vehicle-service/iam.json', import.meta.url), 'utf8')) as DevIamConfig;
  iam = await startDevIam({ config });
});
afterAll(async () => { await iam.close(); });

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => { resolve(port); });
    });
  });
}

async function start(name: string, entry: string, tsconfig?: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, IAM_BASE_URL: iam.baseUrl, PORT: String(port) };
  if (tsconfig) env.TSX_TSCONFIG_PATH = tsconfig;
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/${name}/${entry}`], { cwd: root, env });
  let output = '';
  child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
  const deadline = Date.now() + 45_000;
  while (!output.includes('listening on')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`examples/${name} did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: `http://127.0.0.1:${port}` };
}

describe.each(examples)('examples/$name', { timeout: 90_000 }, ({ name, entry, tsconfig }) => {
  test('package.json names iam-authz and the framework, with a start script running the entry', async () => {
    const pkg = JSON.parse(await readFile(new URL(`../../examples/${name}/package.json`, import.meta.url), 'utf8')) as { type: string; scripts: { start: string }; dependencies: Record<string, string> };
    expect(pkg.type).toBe('module');
    expect(pkg.scripts.start).toContain(entry);
    expect(Object.keys(pkg.dependencies)).toEqual(expect.arrayContaining(['iam-authz', name === 'nestjs' ? '@nestjs/core' : name]));
  });

  test('GET /vehicles/:vin: 200 with READ on the VIN, 401 without a token, 403 for another VIN', async () => {
    const { child, url } = await start(name, entry, tsconfig);
    try {
      const get = (path: string, token?: string) => fetch(`${url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
      const driver = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
      const owner = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' });
      const ok = await get('/vehicles/WVW1', driver);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ vin: 'WVW1', readBy: 'actor-alice' });
      expect((await get('/vehicles/WVW1', owner)).status).toBe(200);
      const anonymous = await get('/vehicles/WVW1');
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect((await get('/vehicles/WVW2', driver)).status).toBe(403);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
