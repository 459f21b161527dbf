/**
 * `iam-authz check`, run as a real process: an inventory written by a real authorizer held against
 * policy files and against the development IAM's policy API. Exit 0 when every permission is
 * granted, 1 with each ungranted one per application and the routes asking for it, 2 with one line
 * for each kind of bad input; the token never appears in any output.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer, type InventoryEntry } from 'iam-authz';
import { createGuards } from 'iam-authz/adapter';
import { startDevIam, type DevIam, type DevIamConfig, type RolePolicy } from '../../src/index.js';
import { runCli, type CliRun } from '../support.js';

let iam: DevIam;
let alice: string;
let dir: string;
/** A loopback server answering what an IAM should not: a redirect, too much, HTML, not a policy. */
let odd: Server;
let oddUrl: string;
/** Paths of the files written in `dir`, by name. */
const file: Record<string, string> = {};

/** What a service asks for, as a real authorizer lists it (no routes: these guards are made outside a framework). */
let inventory: InventoryEntry[];
/** The same, and what a framework records with its routes: a typo, a Nest handler, a report-mode guard, an unknown service. */
let drifting: InventoryEntry[];
let app1: RolePolicy;
const app2: RolePolicy = {
  applicationId: 'app-2', changeId: 'c2',
  roles: [{ key: 'FLEET', servicePolicies: [
    { serviceDefinitionKey: 'vehicle-service', permissions: [{ key: 'READ' }, { key: 'WRTIE' }] },
    { serviceDefinitionKey: 'fleet-service', permissions: [{ key: 'LIST' }] },
  ] }],
};

beforeAll(async () => {
  const config = JSON.parse(await readFile(new URL('../../../../examples/vehicle-service/iam.json', import.meta.url), 'utf8')) as DevIamConfig;
  iam = await startDevIam({ config, console: false });
  alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
  app1 = iam.policyOf('app-1')!;

  const authorizer = createAuthorizer({ baseUrl: iam.baseUrl });
  const guards = createGuards<{ vin: string }>(authorizer);
  guards.requirePermission('vehicle-service', 'READ', 'VIN', (req) => req.vin);
  guards.requirePermission('vehicle-service', 'WRITE', 'VIN', (req) => req.vin, { mode: 'report' });
  // Any one of them grants: READ is granted, so ADMIN (granted nowhere) is no finding.
  guards.requireAnyPermission('vehicle-service', ['ADMIN', 'READ'], { node: () => 'N-ROOT' });
  inventory = authorizer.inventory();
  await authorizer.close();
  drifting = [
    ...inventory,
    { service: 'vehicle-service', permission: 'WRTIE', resourceType: 'VIN', mode: 'enforce', route: { method: 'PUT', path: '/vehicles/:vin' } },
    { service: 'vehicle-service', permission: 'WRTIE', resourceType: 'VIN', mode: 'enforce', route: { controller: 'VehicleController', handler: 'write' } },
    { service: 'vehicle-service', permission: 'WRTIE', resourceType: 'VIN', mode: 'report', route: { method: 'PATCH', path: '/vehicles/:vin' } },
    { service: 'fleet-service', permissions: ['LIST', 'ADMIN'], node: true, mode: 'enforce', route: { method: 'GET', path: '/fleet\u001b[2J\u202e' } },
  ];

  dir = await mkdtemp(join(tmpdir(), 'iam-authz-check-'));
  const files: Record<string, string> = {
    'inventory.json': JSON.stringify(inventory),
    'drifting.json': JSON.stringify(drifting),
    'empty-inventory.json': '[]',
    'app-1.json': JSON.stringify(app1),
    'both.json': JSON.stringify([app1, app2]),
    'broken.json': '[{"service": "vehicle-service",',
    'object.json': '{"service": "vehicle-service"}',
    'no-service.json': '[{"permission": "READ", "mode": "enforce"}]',
    'no-change-id.json': '{"applicationId": "app-1", "roles": []}',
    'bad-role.json': JSON.stringify([app1, { applicationId: 'app-2', changeId: 'c', roles: [{ servicePolicies: [] }] }]),
    'no-policies.json': '[]',
    'twice.json': JSON.stringify([app1, app1]),
  };
  for (const [name, text] of Object.entries(files)) await writeFile(file[name] = join(dir, name), text);
  await mkdir(file['a-directory'] = join(dir, 'a-directory'));
  file.missing = join(dir, 'missing.json');

  odd = createServer((req, res) => {
    if (req.url === '/redirect') res.writeHead(302, { location: `${iam.baseUrl}/policy/v1/roles` }).end();
    else if (req.url === '/big') res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(32 * 1024 * 1024) }).write('[');
    else if (req.url === '/html') res.writeHead(200, { 'content-type': 'text/html' }).end('<html>sign in</html>');
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"roles": "none"}');
  });
  await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
  oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
});

afterAll(async () => {
  odd.closeAllConnections();
  await new Promise((resolve) => odd.close(resolve));
  await iam.close();
  await rm(dir, { recursive: true, force: true });
});

const check = (...args: string[]): Promise<CliRun> => runCli(['check', ...args]);

/** Exit 2 with exactly one line on stderr, naming what is wrong; nothing on stdout, no stack. */
function expectRefused(out: CliRun, message: RegExp | string): void {
  expect(out.code, out.stderr).toBe(2);
  expect(out.stdout).toBe('');
  const lines = out.stderr.trimEnd().split('\n');
  expect(lines, out.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^iam-authz check: /);
  if (typeof message === 'string') expect(lines[0]).toContain(message);
  else expect(lines[0]).toMatch(message);
  expect(out.stderr).not.toMatch(/^\s+at /m);
}

describe('policy files', () => {
  test('exit 0: every permission asked for is granted in each application', async () => {
    const [one, both] = await Promise.all([
      check('--inventory', file['inventory.json']!, '--policy', file['app-1.json']!),
      check('--inventory', file['inventory.json']!, '--policy', file['both.json']!),
    ]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toBe(`ok: every permission ${file['inventory.json']} asks for (3, from 3 guards) is granted by some role of app-1 (changeId ${app1.changeId})\n`);
    expect(both.code, both.stdout).toBe(1); // app-2 has no WRITE
  }, 60_000);

  test('exit 1: each ungranted permission, per application, with every route asking for it; file text escaped', async () => {
    const out = await check('--inventory', file['drifting.json']!, '--policy', file['both.json']!);
    expect(out.code, out.stderr).toBe(1);
    expect(out.stderr).toBe('');
    expect(out.stdout).toBe([
      `no role of application app-1 (changeId ${app1.changeId}, ${file['both.json']}) grants:`,
      '  vehicle-service WRTIE',
      '    PUT /vehicles/:vin',
      '    VehicleController.write',
      '    PATCH /vehicles/:vin (report mode: logged, not yet denied)',
      '  fleet-service any of LIST, ADMIN (no role grants anything in fleet-service)',
      '    GET /fleet\\u001b[2J\\u202e',
      `no role of application app-2 (changeId c2, ${file['both.json']}) grants:`,
      '  vehicle-service WRITE',
      '    (route not recorded: call auditRoutes(app) before writing the inventory) (report mode: logged, not yet denied)',
      '3 permissions granted by no role, in 2 of 2 applications',
      '',
    ].join('\n'));
    expect(out.raw.includes(0x1b)).toBe(false);
  }, 60_000);

  test('an empty inventory asks for nothing: exit 0, and says it may have been written too early', async () => {
    const out = await check('--inventory', file['empty-inventory.json']!, '--policy', file['app-1.json']!);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('lists no guard');
  }, 60_000);

  test('exit 2: one line naming the file and what is wrong, for each kind of bad input', async () => {
    const cases: [string[], RegExp | string][] = [
      [['--inventory', file.missing!, '--policy', file['app-1.json']!], `${file.missing}: no such file`],
      [['--inventory', file['inventory.json']!, '--policy', file.missing!], `${file.missing}: no such file`],
      [['--inventory', file['a-directory']!, '--policy', file['app-1.json']!], `${file['a-directory']} is not a file`],
      [['--inventory', file['broken.json']!, '--policy', file['app-1.json']!], new RegExp(`${file['broken.json']} is not JSON`)],
      [['--inventory', file['inventory.json']!, '--policy', file['broken.json']!], `${file['broken.json']} is not JSON`],
      [['--inventory', file['object.json']!, '--policy', file['app-1.json']!], `${file['object.json']} is not an inventory: expected an array`],
      [['--inventory', file['no-service.json']!, '--policy', file['app-1.json']!], `${file['no-service.json']} is not an inventory: entry 0 has no "service"`],
      [['--inventory', file['app-1.json']!, '--policy', file['inventory.json']!], 'are --inventory and --policy swapped?'],
      [['--inventory', file['inventory.json']!, '--policy', file['no-change-id.json']!], `${file['no-change-id.json']} is not a role policy: changeId is missing`],
      [['--inventory', file['inventory.json']!, '--policy', file['bad-role.json']!], `${file['bad-role.json']} is not a role policy: in policy 1 of the array, roles[0].key is missing`],
      [['--inventory', file['inventory.json']!, '--policy', file['no-policies.json']!], `${file['no-policies.json']} holds no role policy`],
      [['--inventory', file['inventory.json']!, '--policy', file['twice.json']!], `${file['twice.json']} holds two policies of application app-1`],
    ];
    const outs = await Promise.all(cases.map(([args]) => check(...args)));
    outs.forEach((out, i) => { expectRefused(out, cases[i]![1]); });
  }, 120_000);

  test('usage errors exit 2 with the help; --help describes the command', async () => {
    const [noPolicy, tokenForFile, help, top] = await Promise.all([
      check('--inventory', file['inventory.json']!),
      check('--inventory', file['inventory.json']!, '--policy', file['app-1.json']!, '--token', alice),
      check('--help'),
      runCli(['--help']),
    ]);
    expect(noPolicy.code).toBe(2);
    expect(noPolicy.stderr).toContain('--policy is required');
    expect(tokenForFile.code).toBe(2);
    expect(tokenForFile.stderr).toContain('--token goes with --policy URL only');
    expect(tokenForFile.raw.includes(alice)).toBe(false);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: iam-authz check --inventory FILE --policy FILE/);
    expect(top.stdout).toMatch(/^ {2}check {8}/m);
  }, 60_000);
});

describe('--policy URL: the policy API of an IAM', () => {
  const policyApi = (): string => `${iam.baseUrl}/policy/v1/roles`;
  const outputs: CliRun[] = [];
  const keep = async (run: Promise<CliRun>): Promise<CliRun> => { const out = await run; outputs.push(out); return out; };
  /** Well-formed, but no IAM signed it: refused with 401. */
  const forged = `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from('{"sub":"mallory"}').toString('base64url')}.c2lnbmF0dXJlLW5vdC1yZWFs`;

  test('exit 0 and 1 against the development IAM, the token from --token, stdin or IAM_AUTHZ_TOKEN', async () => {
    const [given, piped, fromEnv, drift] = await Promise.all([
      keep(check('--inventory', file['inventory.json']!, '--policy', policyApi(), '--token', alice)),
      keep(runCli(['check', '--inventory', file['inventory.json']!, '--policy', policyApi(), '--token', '-'], { input: `Bearer ${alice}\n` })),
      keep(runCli(['check', '--inventory', file['inventory.json']!, '--policy', policyApi()], { env: { IAM_AUTHZ_TOKEN: alice }, input: '' })),
      keep(check('--inventory', file['drifting.json']!, '--policy', policyApi(), '--token', alice)),
    ]);
    for (const out of [given, piped, fromEnv]) {
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain(`is granted by some role of app-1 (changeId ${app1.changeId})`);
    }
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain(`no role of application app-1 (changeId ${app1.changeId}, ${policyApi()}) grants:\n  vehicle-service WRTIE\n    PUT /vehicles/:vin`);
  }, 60_000);

  test('exit 2 for a bad URL, an IAM that refuses, redirects, cannot be reached or answers no policy', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/policy/v1/roles`;
    await new Promise((resolve) => closed.close(resolve));
    const cases: [string, string, RegExp | string][] = [
      ['http://[::1/policy', alice, '--policy http://[::1/policy is not a valid URL'],
      ['ftp://127.0.0.1/policy', alice, '--policy is a ftp: URL: only http and https URLs are fetched'],
      ['http://iam.example.com/policy/v1/roles', alice, 'plain http to a host that is not loopback'],
      [`http://user:pw@127.0.0.1:1/policy`, alice, 'holds a user name or password'],
      [policyApi(), forged, `${policyApi()} answered 401 (is the token valid, and from this IAM?)`],
      [`${iam.baseUrl}/policy/v2/roles`, alice, `${iam.baseUrl}/policy/v2/roles answered 404`],
      [closedUrl, alice, `cannot reach ${closedUrl} (ECONNREFUSED)`],
      [`${oddUrl}/redirect`, alice, `${oddUrl}/redirect answered 302 (a redirect, not followed)`],
      [`${oddUrl}/big`, alice, `${oddUrl}/big answered with more than 16777216 bytes`],
      [`${oddUrl}/html`, alice, `the answer of ${oddUrl}/html is not JSON`],
      [`${oddUrl}/not-a-policy?secret=x`, alice, `the answer of ${oddUrl}/not-a-policy is not a role policy: applicationId is missing`],
      [policyApi(), `${alice}\u001b]0;x\u0007`, 'the token is not a bearer token'],
    ];
    const outs = await Promise.all(cases.map(([url, token]) => keep(check('--inventory', file['inventory.json']!, '--policy', url, '--token', token))));
    outs.forEach((out, i) => { expectRefused(out, cases[i]![2]); });
    // The URL's query is not repeated (it may hold a secret).
    expect(outs[10]!.stderr).not.toContain('secret');
  }, 120_000);

  test('the token appears in no output, whatever happened', () => {
    expect(outputs.length).toBeGreaterThan(10);
    for (const out of outputs) {
      expect(out.raw.includes(alice)).toBe(false);
      expect(out.raw.includes(forged)).toBe(false);
      // Nor any one of its parts (the signature alone is a secret's worth of text).
      for (const part of alice.split('.')) expect(out.raw.includes(part)).toBe(false);
    }
  });
});
