/**
 * Adapters are thin: each framework's files are short shims over the adapter kit
 * (`iam-authz/adapter`), where everything generic lives once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../../adapters/', import.meta.url));

test.each(['express', 'koa', 'fastify', 'hono', 'fetch', 'nestjs'])('%s: every file is short (entry ≤ 80 lines, any file ≤ ~100)', (framework) => {
  for (const file of readdirSync(`${root}${framework}`).filter((f) => f.endsWith('.ts'))) {
    const lines = readFileSync(`${root}${framework}/${file}`, 'utf8').trimEnd().split('\n').length;
    expect(lines, `${framework}/${file}`).toBeLessThanOrEqual(file === 'index.ts' ? 80 : 105);
  }
});
