/**
 * The test tree mirrors the source tree (test/README.md): every directory of src/ and adapters/ has
 * its tests in the same place under test/ — src/token/ in test/token/, adapters/nestjs/ in
 * test/adapters/nestjs/. The five HTTP adapters are the exception, and say where they are tested
 * instead: one suite runs the same application on each of them, from test/adapters/.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const repo = fileURLToPath(new URL('../', import.meta.url));

/** Framework adapters tested together by the cross-framework suites, and the file that mounts each. */
const TESTED_TOGETHER: Readonly<Record<string, string>> = {
  'adapters/express': 'test/adapters/apps.ts',
  'adapters/koa': 'test/adapters/apps.ts',
  'adapters/fastify': 'test/adapters/apps.ts',
  'adapters/hono': 'test/adapters/apps-fetch.ts',
  'adapters/fetch': 'test/adapters/apps-fetch.ts',
};

/** Every directory under `top`, relative to the repository, `top` itself excluded. */
function directories(top: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(`${repo}${dir}`, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      found.push(`${dir}/${entry.name}`);
      walk(`${dir}/${entry.name}`);
    }
  };
  walk(top);
  return found;
}

/** `src/token` → `test/token`; `adapters/nestjs` → `test/adapters/nestjs`. */
const mirror = (dir: string): string => `test/${dir.replace(/^src\//, '')}`;

test.each([...directories('src'), ...directories('adapters')])('%s has its tests in the mirrored directory', (dir) => {
  const together = TESTED_TOGETHER[dir];
  if (together !== undefined) {
    expect(readFileSync(`${repo}${together}`, 'utf8'), `${together} mounts ${dir}`).toContain(`'../../${dir}/index.js'`);
    return;
  }
  const tests = mirror(dir);
  expect(existsSync(`${repo}${tests}`), `${dir} has no ${tests}/ (see test/README.md)`).toBe(true);
  expect(readdirSync(`${repo}${tests}`).some((f) => /\.test(-d)?\.ts$/.test(f)), `${tests}/ holds no test`).toBe(true);
});
