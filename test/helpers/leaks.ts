/** Walks errors and diagnostics messages for text that must not be there (upstream bodies, tokens). */
import { inspect } from 'node:util';

/**
 * Every string reachable from `value`: messages, stacks, causes, own properties (enumerable or
 * not), buffers decoded as latin1, and `util.inspect`'s rendering as a logger would print it.
 */
export function reachableText(value: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  const walk = (v: unknown, depth: number): void => {
    if (depth > 12 || v === null || v === undefined) return;
    if (typeof v === 'string') { parts.push(v); return; }
    if (typeof v !== 'object' && typeof v !== 'function') return; // numbers, booleans, symbols: no text
    if (seen.has(v)) return;
    seen.add(v);
    if (v instanceof Uint8Array) { parts.push(Buffer.from(v).toString('latin1')); return; }
    if (v instanceof Error) { parts.push(v.message, v.stack ?? ''); walk(v.cause, depth + 1); }
    if (v instanceof Map || v instanceof Set) { for (const x of v) walk(x, depth + 1); return; }
    for (const key of Object.getOwnPropertyNames(v)) {
      let member: unknown;
      try { member = (v as Record<string, unknown>)[key]; } catch { continue; }
      if (typeof member === 'function') continue;
      walk(member, depth + 1);
    }
  };
  walk(value, 0);
  parts.push(inspect(value, { depth: Infinity, showHidden: true }));
  return parts.join('\n');
}
