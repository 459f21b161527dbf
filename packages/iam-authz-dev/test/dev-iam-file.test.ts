/** `startDevIam` and `setConfig` also take the path of a JSON config file. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { DevIamConfigError, startDevIam } from '../src/index.js';

const example = fileURLToPath(new URL('../../../examples/vehicle-service/iam.json', import.meta.url));

test('a config file path is read and validated; a bad file is refused and the old config stays', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'iam-authz-config-'));
  const iam = await startDevIam({ config: example });
  try {
    const before = iam.policyOf('app-1');
    expect(before?.roles.map((r) => r.key)).toEqual(['DRIVER', 'OWNER']);
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{ not json');
    expect(() => { iam.setConfig(broken); }).toThrow(DevIamConfigError);
    expect(() => { iam.setConfig(join(dir, 'missing.json')); }).toThrow(/cannot read/);
    expect(iam.policyOf('app-1')).toEqual(before);
  } finally {
    await iam.close();
    await rm(dir, { recursive: true, force: true });
  }
  await expect(startDevIam({ config: join(dir, 'missing.json') })).rejects.toBeInstanceOf(DevIamConfigError);
});
