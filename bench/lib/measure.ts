/**
 * A tiny fixed-time-budget micro-benchmark harness, shared by the scripts in `bench/`.
 *
 * `measure(name, fn)` runs `fn` for a warm-up period, then for `batches` batches of `batchMs` each,
 * and reports the median of the per-batch rates (plus min/max, so noise is visible).
 * `measureInterleaved(cases)` does the same for several cases, alternating their batches. If `fn`
 * returns a promise, every call is awaited before the next one starts (one request at a time, no
 * concurrency), so async cases measure latency-bound throughput on one core.
 *
 * Calls run in chunks between two clock reads, the chunk size calibrated during warm-up so a chunk
 * takes about a millisecond: reading the clock after every call would dominate sub-microsecond cases.
 */
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';
import { summarize } from './stats.mjs';

export interface MeasureOptions {
  /** Warm-up time (ms) before measuring; lets the JIT settle. Default `BENCH_WARMUP_MS` or 500. */
  warmupMs?: number;
  /** Number of measured batches. Default `BENCH_BATCHES` or 10. */
  batches?: number;
  /** Duration of one batch (ms). Default `BENCH_BATCH_MS` or 200 (10 × 200 ms = 2 s per case). */
  batchMs?: number;
  /**
   * `measureInterleaved` only: run the cases in reverse order in every other round (A B C, C B A, …)
   * so that no case always runs first after the garbage collection. Default `false`.
   */
  alternate?: boolean;
}

export interface MeasureResult {
  name: string;
  /** Median of the batch rates, operations per second. */
  opsPerSec: number;
  /** 1e9 / opsPerSec: median time of one operation, nanoseconds. */
  nsPerOp: number;
  /** Slowest and fastest batch, operations per second. */
  minOpsPerSec: number;
  maxOpsPerSec: number;
  /** Every batch rate, in run order. */
  batchOpsPerSec: number[];
  /**
   * Median of the batch rates per second of CPU time used by this process (user + system, all
   * threads). Less sensitive than `opsPerSec` to other processes competing for the cores; for a case
   * that works off the main thread (WebCrypto runs in the libuv pool) it counts that work too.
   */
  opsPerCpuSec: number;
  /** Every batch rate per CPU-second, in run order. */
  batchOpsPerCpuSec: number[];
  /** Calls made while measuring (warm-up excluded). */
  operations: number;
}

/** Anything `fn` returns lands here so the optimiser cannot drop the call. */
export let sink: unknown;

const TARGET_CHUNK_MS = 1;

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`${name} must be a positive integer`);
  return value;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** Runs `fn` `count` times; returns the elapsed milliseconds. */
type Runner = (count: number) => Promise<number>;

function syncRunner(fn: () => unknown): Runner {
  return (count) => {
    const start = performance.now();
    for (let i = 0; i < count; i++) sink = fn();
    return Promise.resolve(performance.now() - start);
  };
}

function asyncRunner(fn: () => unknown): Runner {
  return async (count) => {
    const start = performance.now();
    for (let i = 0; i < count; i++) sink = await fn();
    return performance.now() - start;
  };
}

/**
 * Measuring time after which the event loop is let turn once. A loop of settled promises never
 * lets I/O run: a background refresh that the measured code starts (a policy or key set going
 * stale during a long run) would time out behind it, and the code would then be measured on its
 * degraded path. A server's event loop turns between requests; so does this one, every few ms.
 */
const TURN_EVERY_MS = 10;

/** Called with each chunk's milliseconds: a turn of the event loop to await once {@link TURN_EVERY_MS} have passed. */
function pacer(): (ms: number) => Promise<void> | undefined {
  let since = 0;
  return (ms) => {
    since += ms;
    if (since < TURN_EVERY_MS) return undefined;
    since = 0;
    return turn();
  };
}

/** Runs `runner` in chunks until `budgetMs` has elapsed; returns operations, elapsed ms and CPU ms. */
async function runFor(runner: Runner, chunk: number, budgetMs: number): Promise<{ ops: number; ms: number; cpuMs: number }> {
  let ops = 0;
  let ms = 0;
  const pace = pacer();
  const cpu = process.cpuUsage();
  while (ms < budgetMs) {
    const took = await runner(chunk);
    ms += took;
    ops += chunk;
    await pace(took);
  }
  const used = process.cpuUsage(cpu);
  return { ops, ms, cpuMs: (used.user + used.system) / 1000 };
}

/** A named operation to measure. */
export interface BenchCase {
  name: string;
  fn: () => unknown;
}

interface Prepared {
  name: string;
  runner: Runner;
  chunk: number;
  rates: number[];
  cpuRates: number[];
  operations: number;
}

/** Calls `fn` once (to learn whether it is async, and to fail fast), then warms it up. */
async function prepare(bench: BenchCase, warmupMs: number): Promise<Prepared> {
  const first = bench.fn();
  const async = isThenable(first);
  sink = async ? await first : first;
  const runner = async ? asyncRunner(bench.fn) : syncRunner(bench.fn);
  // Warm-up, growing the chunk until one chunk takes about TARGET_CHUNK_MS.
  let chunk = 1;
  const warmStart = performance.now();
  const pace = pacer();
  while (performance.now() - warmStart < warmupMs) {
    const ms = await runner(chunk);
    if (ms < TARGET_CHUNK_MS) chunk = Math.min(chunk * 2, 1 << 24);
    await pace(ms);
  }
  return { name: bench.name, runner, chunk, rates: [], cpuRates: [], operations: 0 };
}

function resultOf(p: Prepared): MeasureResult {
  const rates = summarize(p.rates);
  return {
    name: p.name,
    opsPerSec: rates.median,
    nsPerOp: 1e9 / rates.median,
    minOpsPerSec: rates.min,
    maxOpsPerSec: rates.max,
    batchOpsPerSec: p.rates,
    opsPerCpuSec: summarize(p.cpuRates).median,
    batchOpsPerCpuSec: p.cpuRates,
    operations: p.operations,
  };
}

function resolveOptions(options: MeasureOptions): Required<MeasureOptions> {
  return {
    alternate: options.alternate ?? false,
    warmupMs: options.warmupMs ?? envInt('BENCH_WARMUP_MS', 500),
    batches: options.batches ?? envInt('BENCH_BATCHES', 10),
    batchMs: options.batchMs ?? envInt('BENCH_BATCH_MS', 200),
  };
}

/**
 * Measures `fn` (sync, or async and awaited call by call) and returns its rate. `fn` is called once
 * up front to learn whether it is async; a throw or rejection there aborts the measurement.
 */
export async function measure(name: string, fn: () => unknown, options: MeasureOptions = {}): Promise<MeasureResult> {
  const [result] = await measureInterleaved([{ name, fn }], options);
  return result!;
}

/**
 * Measures several cases with their batches interleaved (round r runs batch r of every case), so a
 * change in machine load during the run hits every case alike and ratios between cases stay
 * meaningful on a shared machine. Each case is warmed up first, in order.
 */
export async function measureInterleaved(cases: readonly BenchCase[], options: MeasureOptions = {}): Promise<MeasureResult[]> {
  const { warmupMs, batches, batchMs, alternate } = resolveOptions(options);
  const prepared: Prepared[] = [];
  for (const bench of cases) prepared.push(await prepare(bench, warmupMs));
  for (let b = 0; b < batches; b++) {
    for (const p of alternate && b % 2 === 1 ? [...prepared].reverse() : prepared) {
      // Collect the previous case's garbage now, so one case's GC debt is not paid in the next
      // case's batch (jose allocates far more than the others). Needs `node --expose-gc`.
      collectGarbage?.();
      const { ops, ms, cpuMs } = await runFor(p.runner, p.chunk, batchMs);
      p.rates.push((ops * 1000) / ms);
      p.cpuRates.push((ops * 1000) / cpuMs);
      p.operations += ops;
    }
  }
  return prepared.map(resultOf);
}

const collectGarbage = (globalThis as { gc?: () => void }).gc;

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

const NAME_WIDTH = 44;

/** Column titles matching {@link formatResult}. */
export function formatHeader(nameWidth = NAME_WIDTH): string {
  return `${'case'.padEnd(nameWidth)} ${'ops/s'.padStart(11)} ${'ns/op'.padStart(9)}   ${'batch min–max ops/s'.padEnd(21)} ${'ops/CPU-s'.padStart(11)}`;
}

/**
 * One aligned line: name, median ops/s (wall clock), median ns/op, the slowest and fastest batch,
 * and the median rate per CPU-second (see {@link MeasureResult.opsPerCpuSec}).
 */
export function formatResult(result: MeasureResult, nameWidth = NAME_WIDTH): string {
  const spread = `${int.format(result.minOpsPerSec)}–${int.format(result.maxOpsPerSec)}`;
  return (
    `${result.name.padEnd(nameWidth)} ${int.format(result.opsPerSec).padStart(11)} ${int.format(result.nsPerOp).padStart(9)}` +
    `   ${spread.padEnd(21)} ${int.format(result.opsPerCpuSec).padStart(11)}`
  );
}

/** A line describing where the numbers come from (Node, V8, OpenSSL, cores, load), for the log. */
export function environmentLine(): string {
  const v = process.versions;
  const load = loadavg().map((l) => l.toFixed(2)).join(' ');
  return `node ${v.node} (V8 ${v.v8}, OpenSSL ${v.openssl}), ${availableParallelism()} CPUs, load average ${load}`;
}
