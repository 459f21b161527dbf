/** `npm start -- --help` (issue #15 §5): usage on stdout, exit 0; an unknown option: the error and usage on stderr, exit 2. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';

const START = fileURLToPath(new URL('../../../../examples/vehicle-service/start.ts', import.meta.url));
const run = (...args: string[]) => promisify(execFile)(process.execPath, ['--import', 'tsx', START, ...args], { cwd: fileURLToPath(new URL('../../../../', import.meta.url)) })
  .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (error: unknown) => {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  });

describe('npm start options', () => {
  test.each(['--help', '-h'])('%s prints the usage and exits 0', async (flag) => {
    const { code, stdout } = await run(flag);
    expect(code).toBe(0);
    expect(stdout).toContain('--framework express|koa|fastify');
    expect(stdout).toContain('--fresh-keys');
  });

  test('an unknown option names it, prints the usage, exits 2', async () => {
    const { code, stderr } = await run('--bogus');
    expect(code).toBe(2);
    expect(stderr).toMatch(/--bogus/);
    expect(stderr).toContain('--iam-port N');
  });
});
