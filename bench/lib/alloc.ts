/**
 * How much a call allocates on the JavaScript heap, measured two ways over the same loop:
 *
 * - bytes per call: the growth of V8's young generation (`new_space` used size) over chunks of
 *   calls run right after a full GC; a chunk during which a scavenge ran (the used size dropped)
 *   is discarded, and the median over the other chunks is kept (`bench/lib/stats.mjs`);
 * - scavenges per `calls` calls: minor GCs reported by a `gc` PerformanceObserver while the loop
 *   runs (what `node --trace-gc` prints as `Scavenge`).
 *
 * Async functions are awaited one call at a time, like `measure()` does. Needs a `gc()`: from
 * `node --expose-gc`, or else enabled here through `v8.setFlagsFromString` (works in test workers).
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setImmediate as turn } from 'node:timers/promises';
import { summarize } from './stats.mjs';

export interface Allocation {
  /** Median young-generation growth per call, bytes (chunks with a scavenge discarded). */
  bytesPerCall: number;
  /** The least growth per call of any chunk: other work in the process (a timer, a server in it) only adds. */
  minBytesPerCall: number;
  /** Minor GCs (scavenges) while `calls` calls ran. */
  scavenges: number;
  /** Major GCs (mark-compact) while `calls` calls ran. */
  majorGcs: number;
  calls: number;
}

function gcFunction(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function newSpaceUsed(): number {
  for (const space of getHeapSpaceStatistics()) if (space.space_name === 'new_space') return space.space_used_size;
  throw new Error('no new_space in v8.getHeapSpaceStatistics()');
}

/** Calls `fn` `count` times, awaiting it when it returns a promise; yields to the event loop every 1,000 calls. */
async function run(fn: () => unknown, count: number, isAsync: boolean): Promise<void> {
  for (let done = 0; done < count; done += 1_000) {
    const n = Math.min(1_000, count - done);
    if (isAsync) for (let i = 0; i < n; i++) await fn();
    else for (let i = 0; i < n; i++) fn();
    if (done + n < count) await turn();
  }
}

/** Measures `fn` (warmed up first, so the JIT's own allocations are over). */
export async function allocation(fn: () => unknown, calls = 100_000, chunk = 1_000): Promise<Allocation> {
  const gc = gcFunction();
  const first = fn();
  const isAsync = first instanceof Promise;
  if (isAsync) await first;
  await run(fn, 20_000, isAsync);

  const perChunk: number[] = [];
  for (let c = 0; c < 15; c++) {
    await turn();
    gc();
    const before = newSpaceUsed();
    await run(fn, chunk, isAsync);
    const grown = newSpaceUsed() - before;
    if (grown >= 0) perChunk.push(grown / chunk);
  }
  const perCall = summarize(perChunk);

  let scavenges = 0;
  let majorGcs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) majorGcs++;
    }
  });
  gc();
  await new Promise((resolve) => setImmediate(resolve)); // the forced GC's own entry, delivered before we listen
  observer.observe({ entryTypes: ['gc'] });
  await run(fn, calls, isAsync);
  await new Promise((resolve) => setTimeout(resolve, 20)); // entries are delivered asynchronously
  observer.disconnect();
  return { bytesPerCall: perCall.median, minBytesPerCall: perCall.min, scavenges, majorGcs, calls };
}
