/**
 * Shared setup of the console tests: a development IAM started from a config file in a fresh
 * temporary directory (or from an object: memory mode), and a raw HTTP client that sends exactly
 * the headers it is given, keeps the console's session cookie, and exposes the CSRF token.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDevIam, type DevIam } from '../../src/dev-iam.js';
import type { DevIamConfig } from '../../src/config.js';

/** The example's config (vehicle-service; DRIVER: READ; OWNER: READ, WRITE) plus a second application. */
export async function exampleConfig(): Promise<DevIamConfig> {
  const config = JSON.parse(await readFile(fileURLToPath(new URL('../../../../examples/vehicle-service/iam.json', import.meta.url)), 'utf8')) as DevIamConfig;
  config.applications.push({
    id: 'app-2',
    serviceDefinitions: [{ key: 'fleet-service', permissions: ['LIST', 'MANAGE'] }],
    roles: [{ key: 'VIEWER', permissions: { 'fleet-service': ['LIST'] } }],
  });
  config.actors.push({
    id: 'actor-frank', idp: 'dev', subject: 'frank', account: 'acc-2', application: 'app-2',
    tenants: { 'tenant-9': [{ r: ['VIEWER'], n: ['fleet-1', 'fleet-2'] }] },
  });
  return config;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  json(): any;
}

/** Sends exactly `headers` (plus `host`, unless given, and `content-length` for a body). */
export function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...options.headers };
    if (options.body !== undefined && headers['transfer-encoding'] === undefined) headers['content-length'] ??= Buffer.byteLength(options.body);
    const req = request(url, { method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A script's view of the console API: one session (cookie + CSRF token). */
export class ConsoleClient {
  cookie = '';
  csrf = '';
  constructor(readonly baseUrl: string) {}

  async open(): Promise<this> {
    const res = await send(`${this.baseUrl}/console/api/session`);
    this.cookie = (res.headers['set-cookie']?.[0] ?? '').split(';')[0]!;
    this.csrf = res.json().csrfToken;
    return this;
  }

  async config(): Promise<{ etag: string; config: DevIamConfig }> {
    const res = await send(`${this.baseUrl}/console/api/config`);
    return { etag: res.headers.etag!, config: res.json() };
  }

  async status(): Promise<any> {
    return (await send(`${this.baseUrl}/console/api/status`)).json();
  }

  /** A mutating request with the session's cookie and CSRF token; `headers` add or replace (`null` removes). */
  send(method: string, path: string, body: unknown, headers: Record<string, string | null> = {}): Promise<RawResponse> {
    const all: Record<string, string> = { 'content-type': 'application/json', cookie: this.cookie, 'x-csrf-token': this.csrf };
    for (const [name, value] of Object.entries(headers)) {
      if (value === null) Reflect.deleteProperty(all, name);
      else all[name] = value;
    }
    return send(`${this.baseUrl}/console/api/${path}`, { method, headers: all, body: typeof body === 'string' ? body : JSON.stringify(body) });
  }

  put(config: unknown, etag: string, headers: Record<string, string | null> = {}): Promise<RawResponse> {
    return this.send('PUT', 'config', config, { 'if-match': etag, ...headers });
  }
}

export interface ConsoleEnv {
  iam: DevIam;
  /** The config file; `undefined` in memory mode. */
  file: string | undefined;
  dir: string;
  client: ConsoleClient;
  close(): Promise<void>;
}

export async function startConsoleEnv(options: { memory?: boolean; config?: DevIamConfig; text?: string } = {}): Promise<ConsoleEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'iam-console-'));
  const config = options.config ?? await exampleConfig();
  let file: string | undefined;
  if (!options.memory) {
    file = join(dir, 'iam.json');
    await writeFile(file, options.text ?? JSON.stringify(config, null, 2));
  }
  const iam = await startDevIam({ config: file ?? config });
  const client = await new ConsoleClient(iam.baseUrl).open();
  return {
    iam, file, dir, client,
    async close() {
      await iam.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The problem+json members of an answer, asserting the media type. */
export function problemOf(res: RawResponse): { status: number; detail: string; field?: string; currentEtag?: string } {
  if (res.headers['content-type'] !== 'application/problem+json') throw new Error(`not a problem answer: ${res.status} ${res.headers['content-type']} ${res.body.slice(0, 200)}`);
  return res.json();
}
