/** `iam-authz explain` names a permission that no role of the application grants, against a real development IAM. */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startDevIam, type DevIam, type DevIamConfig } from '../../src/index.js';
import { explainCommand } from '../../src/cli/explain.js';

let iam: DevIam;
let alice: string;

beforeAll(async () => {
  const config = JSON.parse(await readFile(new URL('../../../../examples/vehicle-service/iam.json', import.meta.url), 'utf8')) as DevIamConfig;
  iam = await startDevIam({ config });
  alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
});
afterAll(async () => { await iam.close(); });

async function explain(service: string, permission: string): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: string) => { lines.push(line); });
  try {
    const code = await explainCommand(['--token', alice, '--service', service, '--permission', permission, '--resource', 'VIN=WVW1', '--iam', iam.baseUrl]);
    return { code, out: lines.join('\n') };
  } finally {
    log.mockRestore();
  }
}

test('a denied permission that no role of the application grants is named, with what it may mean', async () => {
  const typo = await explain('vehicle-service', 'WRTIE');
  expect(typo.code).toBe(3);
  expect(typo.out).toMatch(/^drift {4}no role of app-1 grants vehicle-service WRTIE \(did you mean WRITE\?\)$/m);
  expect(typo.out).not.toContain(alice);
  const service = await explain('vehicle-servcie', 'READ');
  expect(service.out).toContain('no role of app-1 grants vehicle-servcie READ: no role grants anything in service vehicle-servcie (did you mean vehicle-service?)');
});

test('a permission some other role grants is no drift: no such line', async () => {
  const write = await explain('vehicle-service', 'WRITE');
  expect(write.code).toBe(3);
  expect(write.out).not.toContain('drift');
});
