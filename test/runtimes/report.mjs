/**
 * The runtime suites' reporter: one line per check, and a closing `N passed, N failed` that CI reads.
 * Plain JavaScript, so that Node, Bun, Deno and the Workers driver all load it as it is.
 */
export function reporter() {
  let passed = 0;
  let failed = 0;
  return {
    /** @param {string} name @param {boolean} ok @param {string} [detail] */
    check(name, ok, detail = '') {
      if (ok) passed++;
      else failed++;
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : `: ${detail}`}`);
    },
    /** Prints the closing line; returns whether at least one check ran and every check passed. */
    done() {
      console.log(`${passed} passed, ${failed} failed`);
      return failed === 0 && passed > 0;
    },
  };
}
