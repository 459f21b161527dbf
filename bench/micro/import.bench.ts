/**
 * `import('iam-authz')` time (issue #14 §5; goal ≤ 50 ms), measured in fresh processes on the built
 * package (`npm run build` first): each run imports it once and reports the milliseconds; undici
 * and jose alone are measured alike, interleaved, for comparison. Median and min–max of
 * `BENCH_IMPORT_RUNS` (default 15) runs each.
 *
 * Run: `npm run bench:import`. Not a test: exit code 0.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { environmentLine } from '../lib/measure.js';
import { summarize } from '../lib/stats.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const entry = `${root}dist/src/index.js`;
if (!existsSync(entry)) throw new Error('build first: npm run build');
const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 15);
const targets: [string, string][] = [['iam-authz (dist)', entry], ['undici alone', 'undici'], ['jose alone', 'jose']];
const samples = new Map<string, number[]>(targets.map(([name]) => [name, []]));
for (let r = 0; r < RUNS; r++) {
  for (const [name, specifier] of targets) {
    const script = `const t = performance.now(); await import(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t));`;
    samples.get(name)!.push(Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root }).toString()));
  }
}
console.log(environmentLine());
for (const [name, xs] of samples) {
  const t = summarize(xs);
  console.log(`${name.padEnd(18)} median ${t.median.toFixed(1)} ms  (min ${t.min.toFixed(1)}, max ${t.max.toFixed(1)}, ${RUNS} runs)`);
}
