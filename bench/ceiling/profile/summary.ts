/**
 * A text summary of a V8 CPU profile (`.cpuprofile`), shared by `run.ts` (a server under load) and
 * `calls.ts` (an in-process loop): self time grouped by where the code lives (iam-authz,
 * Fastify/Express, Node internals, RSA, GC), then the functions with the most self time — per
 * operation, so that two profiles of different lengths compare.
 */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

type Frame = CpuProfile['nodes'][number]['callFrame'];

const short = (url: string): string => url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '').replace(/^.*\/(src|adapters|bench)\//, '$1/');

function group(frame: Frame): string {
  const { functionName: name, url } = frame;
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)' || name === '(program)') return name;
  if ((name === 'verify' && url.includes('crypto')) || name === 'verifyOneShot') return 'RSA (crypto.verify)';
  if (/\/(src|adapters)\//.test(url) && !url.includes('node_modules')) return 'iam-authz';
  if (/node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify|fast-json-stringify)/.test(url)) return 'Fastify';
  if (/node_modules\/(express|router|body-parser|finalhandler|send|on-finished|content-type|qs|depd)/.test(url)) return 'Express';
  if (url.startsWith('node:') || url === '') return 'Node internals / native';
  return 'other';
}

/** Summary lines: `operations` is what the time is divided by (requests, calls). */
export function summarize(profile: CpuProfile, operations: number, unit: string, top = 30): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => { self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)); });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, number>();
  const byGroup = new Map<string, number>();
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    const key = `${frame.functionName || '(anonymous)'} ${short(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    byGroup.set(group(frame), (byGroup.get(group(frame)) ?? 0) + us);
  }
  const pct = (us: number): string => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
  const busy = total - (byGroup.get('(idle)') ?? 0);
  return [
    `profile: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy = ${(busy / operations).toFixed(2)} µs per ${unit} on the main thread`,
    '',
    `self time by group (µs per ${unit}):`,
    ...[...byGroup].sort((a, b) => b[1] - a[1]).map(([g, us]) => `  ${pct(us)}  ${(us / operations).toFixed(2).padStart(6)}  ${g}`),
    '',
    `top ${top} functions by self time:`,
    ...[...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top).map(([f, us]) => `  ${pct(us)}  ${(us / operations).toFixed(2).padStart(6)}  ${f}`),
  ];
}
