/**
 * Sample request paths of a route, and which layers of the router run for all of them: the router's
 * own regular expressions decide, so its quirks are seen as they are (a `router.use()` of a
 * prefixed router is matched case-sensitively, its routes not).
 */
import { tokenize, type Token } from './route-paths.js';

/** Enough forms of any route a person writes; more only repeat what these already test. */
const MAX_SAMPLES = 256;
/** Paths that only a layer running for every path matches (the `router.use()` of a router without prefix). */
const ANY_PATHS = ['/', '/zq', '/ZQ/zq/', '/1'];

function expand(tokens: readonly Token[], value: string): string[] {
  let forms = [''];
  for (const t of tokens) {
    const next: string[] = [];
    for (const form of forms) {
      if (t.kind === 'text') next.push(form + t.text);
      else if (t.kind === 'group') next.push(form, ...expand(t.tokens, value).map((inner) => form + inner));
      else {
        next.push(form + value);
        if (t.wildcard) next.push(`${form}${value}/${value}`);
        if (t.optional) next.push(form.endsWith('/') ? form.slice(0, -1) : form);
      }
    }
    forms = next.slice(0, MAX_SAMPLES);
  }
  return forms;
}

/** A request path a route may answer; `respelled`: the same path in other letter case, or with a trailing slash. */
export interface Sample {
  readonly path: string;
  readonly respelled: boolean;
}

/**
 * Request paths a route with this path may be asked for: each optional part with and without,
 * each parameter with a letter and a digit, in the path's own case, upper and lower case, with and
 * without a trailing slash. The caller keeps those the route's own regular expression accepts.
 */
export function samplePaths(path: string): Sample[] {
  const tokens = tokenize(path);
  const seen = new Set<string>();
  const samples: Sample[] = [];
  for (const value of ['x', '1']) {
    for (const form of expand(tokens, value)) {
      const base = form.startsWith('/') ? form : `/${form}`;
      const spellings = [base, base.toUpperCase(), base.toLowerCase()];
      for (const [i, spelled] of spellings.entries()) {
        for (const candidate of spelled === '/' ? [spelled] : [spelled, `${spelled}/`]) {
          if (seen.has(candidate) || samples.length >= MAX_SAMPLES) continue;
          seen.add(candidate);
          samples.push({ path: candidate, respelled: i > 0 || candidate !== base });
        }
      }
    }
  }
  return samples;
}

/** `regexp.test(path)`, leaving a global expression's `lastIndex` as the router left it. */
export function matches(regexp: RegExp, path: string): boolean {
  const { lastIndex } = regexp;
  try {
    regexp.lastIndex = 0;
    return regexp.test(path);
  } finally {
    regexp.lastIndex = lastIndex;
  }
}

/** Whether a layer of `regexp` runs for every sample (with none: for every path at all), or which sample it misses. */
export function coverage(regexp: RegExp, samples: readonly Sample[]): { all: true } | { all: false; missed?: Sample } {
  if (samples.length === 0) return { all: ANY_PATHS.every((p) => matches(regexp, p)) };
  const missed = samples.find((s) => !matches(regexp, s.path));
  if (missed === undefined) return { all: true };
  return samples.some((s) => matches(regexp, s.path)) ? { all: false, missed } : { all: false };
}
