/**
 * The benchmarks' statistics are defined once, in `bench/lib/stats.mjs`: these are their
 * definitions, and no script under bench/ writes its own median or quantile again (two
 * definitions once made two scripts print different medians of the same samples).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { median, pairedRatios, quantile, ratioOfMedians, spread, summarize } from '../../bench/lib/stats.mjs';

describe('bench/lib/stats.mjs', () => {
  it('takes the middle value, or the mean of the two middle ones for an even count', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNaN();
  });

  it('interpolates quantiles between the nearest ranks (type 7), so quantile 0.5 is the median', () => {
    const xs = [10, 1, 9, 2, 8, 3, 7, 4, 6, 5];
    expect(quantile(xs, 0)).toBe(1);
    expect(quantile(xs, 1)).toBe(10);
    expect(quantile(xs, 0.5)).toBe(median(xs));
    expect(quantile(xs, 0.95)).toBeCloseTo(9.55, 10);
    expect(quantile([1, 2, Infinity, Infinity], 0.9)).toBe(Infinity);
    expect(quantile([1, 2, Infinity], 0.25)).toBe(1.5);
    expect(() => quantile(xs, 1.5)).toThrow(RangeError);
  });

  it('summarises, formats a spread, and tells the two ratios apart', () => {
    expect(summarize([5, 1, 3, 2])).toEqual({ n: 4, min: 1, median: 2.5, max: 5 });
    expect(summarize([])).toEqual({ n: 0, min: NaN, median: NaN, max: NaN });
    expect(spread([1, 2, 3, 10], 1)).toBe('2.5 (1.0–10.0)');
    expect(pairedRatios([2, 9], [1, 3])).toEqual([2, 3]);
    expect(ratioOfMedians([2, 9], [1, 3])).toBe(5.5 / 2);
    expect(() => pairedRatios([1], [1, 2])).toThrow(RangeError);
  });
});

describe('the scripts under bench/', () => {
  const root = fileURLToPath(new URL('../../bench/', import.meta.url));
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|mjs|js)$/.test(e.name) ? [join(dir, e.name)] : []));

  it('take their medians and quantiles from bench/lib/stats.mjs', () => {
    const own = /\b(function|const|let)\s+(median|quantile|percentile|p95|p99)\b|\[\s*\w+\.length\s*>>\s*1\s*\]/;
    const offenders = files(root).filter((f) => !f.endsWith('stats.mjs') && own.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
    expect(offenders).toEqual([]);
  });
});
