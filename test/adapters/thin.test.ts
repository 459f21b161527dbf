/**
 * Adapters are thin: each framework's files are short shims over the adapter kit
 * (`iam-authz/adapter`), where everything generic lives once. OpenTelemetry and Redis are
 * integrations, not framework adapters, and are not held to this.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../../adapters/', import.meta.url));
const INTEGRATIONS = ['otel', 'redis'];
const frameworks = readdirSync(root).filter((name) => !INTEGRATIONS.includes(name));

test('every framework adapter is checked', () => {
  expect(frameworks).toEqual(expect.arrayContaining(['express', 'koa', 'fastify', 'hono', 'fetch', 'nestjs']));
});

test.each(frameworks)('%s: every file, entry or not, is at most 80 lines', (framework) => {
  for (const file of readdirSync(`${root}${framework}`).filter((f) => f.endsWith('.ts'))) {
    const lines = readFileSync(`${root}${framework}/${file}`, 'utf8').trimEnd().split('\n').length;
    expect(lines, `${framework}/${file}`).toBeLessThanOrEqual(80);
  }
});
