/**
 * The committed API report (api/iam-authz.api.md) names exactly what the library's subpaths export:
 * a change to the public surface fails here until `npm run api:report` has rewritten the report, so
 * the change shows in review as a diff of that file.
 */
import { describe, expect, it } from 'vitest';
import { apiReport, committedReport, renderReport, REPORT_PATH } from '../../scripts/api-report.js';

describe('API report', () => {
  const report = apiReport();

  it(`${REPORT_PATH} lists every exported name of every subpath, with its kind`, () => {
    expect(committedReport(), `the exports changed: run \`npm run api:report\` and commit ${REPORT_PATH}`).toBe(renderReport(report));
  });

  it('every public name has a TSDoc comment', () => {
    const undocumented = report.flatMap((s) => s.entries.filter((e) => !e.documented).map((e) => `${s.specifier}: ${e.name}`));
    expect(undocumented).toStrictEqual([]);
  });

  it('the surface stays within its budget: at most 105 names, 35 of them at the root', () => {
    // Raising these is a decision for review, like the report itself.
    expect(report.reduce((n, s) => n + s.entries.length, 0)).toBeLessThanOrEqual(105);
    expect(report.find((s) => s.specifier === 'iam-authz')?.entries.length).toBeLessThanOrEqual(35);
  });

  it('covers every subpath of the library, each exporting something', () => {
    expect(report.map((s) => s.specifier)).toContain('iam-authz');
    expect(report.map((s) => s.specifier)).toContain('iam-authz/adapter');
    for (const subpath of report) expect(subpath.entries.length, subpath.specifier).toBeGreaterThan(0);
  });
}, 30_000);
