/**
 * compare.mjs is what fails CI when a runtime answers a row of the scenario table differently from
 * Node.js (.ci/runtimes, .ci/workers): it must fail on a differing status, header or body, on a row
 * one side lacks, and on an empty answers file, and pass only on identical answers.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'iam-authz-compare-'));
afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

const denied = { status: 403, headers: { 'content-type': 'application/problem+json', 'www-authenticate': 'Bearer realm="iam", error="insufficient_scope"' }, body: { status: 403, code: 'ERR_PERMISSION_DENIED' } };
const granted = { status: 200, headers: { 'content-type': 'application/json' }, body: { ok: true, sub: 'actor-bob' } };
const node = { 'fetch: denied → 403': denied, 'fetch: owner → 200': granted };

function compare(other: Record<string, unknown>): { code: number; output: string } {
  writeFileSync(join(dir, 'node.json'), JSON.stringify({ runtime: 'node', answers: node }));
  writeFileSync(join(dir, 'other.json'), JSON.stringify({ runtime: 'other', answers: other }));
  try {
    const output = execFileSync(process.execPath, ['test/runtimes/compare.mjs', join(dir, 'node.json'), join(dir, 'other.json')], { encoding: 'utf8' });
    return { code: 0, output };
  } catch (error) {
    const failed = error as { status: number; stdout: string };
    return { code: failed.status, output: failed.stdout };
  }
}

test('identical answers pass', () => {
  const { code, output } = compare(structuredClone(node));
  expect(code).toBe(0);
  expect(output).toContain('other: 2 of 2 answers identical');
});

test.each([
  ['a status', { ...node, 'fetch: denied → 403': { ...denied, status: 401 } }],
  ['a header', { ...node, 'fetch: owner → 200': { ...granted, headers: { 'content-type': 'application/json;charset=utf-8' } } }],
  ['an extra header', { ...node, 'fetch: owner → 200': { ...granted, headers: { ...granted.headers, 'x-extra': '1' } } }],
  ['a body', { ...node, 'fetch: denied → 403': { ...denied, body: { status: 403, code: 'ERR_TOKEN_INVALID' } } }],
  ['a missing row', { 'fetch: denied → 403': denied }],
  ['an extra row', { ...node, 'hono: denied → 403': denied }],
  ['no rows at all', {}],
])('a difference in %s fails, naming the row', (_what, other) => {
  const { code, output } = compare(other);
  expect(code).toBe(1);
  expect(output).toMatch(/^FAIL other: /m);
});
