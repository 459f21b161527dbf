/**
 * Holds every runtime's answers to the scenario table against Node's: the answers files that
 * suite.mjs and workers/run.mjs wrote (status, headers minus transport headers, body, per row).
 * A row whose answer differs from Node's, or that one side lacks, fails; so does a file without rows.
 *
 * Usage: node compare.mjs <node.json> <other.json>...
 * Prints one line per runtime (and one per differing row) and `N passed, N failed`; exits 1 on any failure.
 */
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { reporter } from './report.mjs';

const [referenceFile, ...others] = process.argv.slice(2);
if (!referenceFile || others.length === 0) throw new Error('usage: node compare.mjs <node.json> <other.json>...');
/** @param {string} file @returns {{ runtime: string, answers: Record<string, unknown> }} */
const load = (file) => JSON.parse(readFileSync(file, 'utf8'));
const { check, done } = reporter();
const reference = load(referenceFile);
const rows = Object.keys(reference.answers);
check(`${reference.runtime}: the reference has answers`, rows.length > 0, referenceFile);

for (const file of others) {
  const { runtime, answers } = load(file);
  const names = new Set([...rows, ...Object.keys(answers)]);
  let differing = 0;
  for (const name of names) {
    const ours = reference.answers[name];
    const theirs = answers[name];
    if (isDeepStrictEqual(ours, theirs)) continue;
    differing++;
    check(`${runtime}: ${name}`, false, `${reference.runtime} ${JSON.stringify(ours)}\n     ${runtime} ${JSON.stringify(theirs)}`);
  }
  check(`${runtime}: ${names.size - differing} of ${names.size} answers identical to ${reference.runtime}'s`, differing === 0 && names.size > 0, `${differing} differ`);
}

if (!done()) process.exitCode = 1;
