/**
 * The statistics every benchmark reports, each defined once, so that two scripts printing "the
 * median" or "p95" of the same samples print the same number.
 *
 * Plain JavaScript with JSDoc types on purpose: the runtime scripts (bench/scenarios/runtimes) run
 * as they are on Node.js without a loader, on Bun, on Deno and, as the workerd driver, on Node 24,
 * and they import this file like the TypeScript scripts do (tsc checks it through `checkJs`).
 *
 * - `quantile(xs, q)`: linear interpolation between the two nearest ranks (Hyndman & Fan type 7,
 *   the default of R, NumPy and spreadsheets' PERCENTILE.INC): position (n − 1) · q in the sorted
 *   samples. p95 is `quantile(xs, 0.95)`.
 * - `median(xs)` = `quantile(xs, 0.5)`: the middle value, or the mean of the two middle values when
 *   the count is even.
 * - `summarize(xs)`: count, least, median and greatest value: the "median (min–max)" of every table.
 * - Ratios come in two kinds, named apart: `ratioOfMedians(a, b)` divides the two medians (cases
 *   whose samples are not paired), `pairedRatios(a, b)` divides round by round (a[i] / b[i], when
 *   round i measured both sides under the same load) and is then summarised like any sample.
 *
 * An empty list has no statistic: every function answers NaN for it, never 0.
 */

/** A sorted copy. @param {readonly number[]} xs @returns {number[]} */
function sorted(xs) {
  return [...xs].sort((a, b) => a - b);
}

/**
 * The `q` quantile (0 ≤ q ≤ 1) of `xs`, interpolated linearly between the nearest ranks; NaN for
 * an empty list. An infinite sample (a replica that never answered) makes the quantiles at and
 * beyond it infinite.
 * @param {readonly number[]} xs @param {number} q @returns {number}
 */
export function quantile(xs, q) {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be within [0, 1], got ${q}`);
  if (xs.length === 0) return Number.NaN;
  const s = sorted(xs);
  const position = (s.length - 1) * q;
  const below = /** @type {number} */ (s[Math.floor(position)]);
  const above = /** @type {number} */ (s[Math.ceil(position)]);
  const fraction = position - Math.floor(position);
  // Equal neighbours (Infinity among them) or an exact rank: no arithmetic that could give NaN.
  return fraction === 0 || below === above ? below : below + (above - below) * fraction;
}

/** The median: the mean of the two middle values for an even count. @param {readonly number[]} xs @returns {number} */
export function median(xs) {
  return quantile(xs, 0.5);
}

/**
 * Count, least, median and greatest value of `xs` (all NaN for an empty list).
 * @param {readonly number[]} xs @returns {{ n: number, min: number, median: number, max: number }}
 */
export function summarize(xs) {
  if (xs.length === 0) return { n: 0, min: Number.NaN, median: Number.NaN, max: Number.NaN };
  const s = sorted(xs);
  return { n: s.length, min: /** @type {number} */ (s[0]), median: median(s), max: /** @type {number} */ (s[s.length - 1]) };
}

/**
 * `median (min–max)` with `digits` decimals, as the HTTP tables print it.
 * @param {readonly number[]} xs @param {number} [digits] @returns {string}
 */
export function spread(xs, digits = 0) {
  const { min, median: m, max } = summarize(xs);
  return `${m.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
}

/**
 * Round-by-round ratios a[i] / b[i] of two series measured in the same rounds.
 * @param {readonly number[]} a @param {readonly number[]} b @returns {number[]}
 */
export function pairedRatios(a, b) {
  if (a.length !== b.length) throw new RangeError(`pairedRatios: ${a.length} rounds against ${b.length}`);
  return a.map((x, i) => x / /** @type {number} */ (b[i]));
}

/** median(a) / median(b). @param {readonly number[]} a @param {readonly number[]} b @returns {number} */
export function ratioOfMedians(a, b) {
  return median(a) / median(b);
}
