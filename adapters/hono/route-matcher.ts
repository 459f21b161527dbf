/**
 * Which handlers of a Hono route table run for a route, up to the route's own: decided by Hono's
 * own router. It is a TrieRouter of our own: matching with the app's router would build its
 * matcher, after which the app could take no more routes. A route's pattern is no request path, so
 * it is matched through sample request paths, each of which the route must match itself; another
 * entry runs for the route when it matches them all. One narrower than the route (`/parts/:id{[0-9]+}`
 * over `/parts/:code`) runs for some of its requests only, and does not count.
 */
import { TrieRouter } from 'hono/router/trie-router';
import { getPattern, splitRoutingPath } from 'hono/utils/url';

/** What the matcher reads of a route table entry. */
export interface TableEntry {
  readonly method: string;
  readonly path: string;
}

// Values for a parameter without a pattern, unlike enough that a narrower pattern refuses one.
const VALUES: readonly string[] = ['iam-authz', '0', 'Z_~'];
// For a parameter with a pattern: the first few of these it accepts.
const POOL: readonly string[] = [...VALUES, ...['0', 'a', 'A'].flatMap((c) => Array.from({ length: 64 }, (_, n) => c.repeat(n + 2)))];
// For a wildcard (which Hono also matches with nothing, `/fleet/*` answering `/fleet`): none, one segment, several.
const WILDCARD: readonly (string | undefined)[] = [undefined, 'iam-authz', 'iam-authz/0'];

function segmentValues(label: string): readonly (string | undefined)[] {
  const pattern = getPattern(label);
  if (pattern === null) return [label];
  if (pattern === '*') return WILDCARD;
  const regex = pattern[2];
  if (regex === true) return VALUES;
  const accepted = POOL.filter((value) => regex.test(value)).slice(0, 3);
  return accepted.length > 0 ? accepted : [label];
}

/** Request paths for a route path (optional parameters resolved): each segment's values, side by side. */
function samplePaths(path: string): string[] {
  const segments = splitRoutingPath(path).map(segmentValues);
  const count = Math.max(1, ...segments.map((values) => values.length));
  return Array.from({ length: count }, (_, k) => `/${segments.map((values) => values[k % values.length]).filter((v) => v !== undefined).join('/')}`);
}

/**
 * For `table` (`app.routes`): a function of an entry's index, a method it answers and one form of
 * its path, returning the indexes of the entries Hono runs, in order, for every request that entry
 * answers there, up to and including itself. Hono runs matching handlers in the order they were
 * added, so one added after the route runs only if the route calls `next()`: it guards nothing.
 */
export function handlerMatcher(table: readonly TableEntry[]): (index: number, method: string, path: string) => number[] {
  const router = new TrieRouter<number>();
  table.forEach(({ method, path }, index) => { router.add(method, path, index); });
  const matched = (method: string, path: string): ReadonlySet<number> => new Set((router.match(method, path)[0] as [number, unknown][]).map(([index]) => index));

  return (index, method, path) => {
    const own = (table[index] as TableEntry).path;
    const samples = samplePaths(path).map((sample) => matched(method, sample)).filter((runs) => runs.has(index));
    const runs: number[] = [];
    for (let i = 0; i <= index; i++) {
      const entry = table[i] as TableEntry;
      if (entry.method !== 'ALL' && entry.method !== method) continue;
      // The same pattern always matches: this holds even for a route no sample fits.
      if (entry.path === own || (samples.length > 0 && samples.every((set) => set.has(i)))) runs.push(i);
    }
    return runs;
  };
}
