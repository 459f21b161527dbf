/**
 * Normalises the `ars` claim to `{ r, c, n }[]` of strings. Never throws, and only copies string
 * items into fresh arrays, so hostile claim keys (`__proto__`, `constructor`) go nowhere.
 */
import type { AccessReference } from '../types.js';

const EMPTY: readonly string[] = Object.freeze([]);

export function normalizeArs(value: unknown): AccessReference[] {
  if (!Array.isArray(value)) return [];
  const out: AccessReference[] = [];
  for (const entry of value as unknown[]) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) continue;
    out.push(
      Object.freeze({
        r: strings(entry, 'r'),
        c: strings(entry, 'c'),
        n: strings(entry, 'n'),
      }),
    );
  }
  return out;
}

function strings(entry: object, field: 'r' | 'c' | 'n'): readonly string[] {
  if (!Object.hasOwn(entry, field)) return EMPTY;
  const items = (entry as Record<string, unknown>)[field];
  if (!Array.isArray(items)) return EMPTY;
  // Already frozen (the verifier froze the parsed payload) and nothing but strings: kept as it is,
  // no copy. A hole reads as undefined, so an array with holes is copied like any other.
  if (Object.isFrozen(items) && allStrings(items as unknown[])) return items as readonly string[];
  const kept: string[] = [];
  for (const item of items as unknown[]) if (typeof item === 'string') kept.push(item);
  return Object.freeze(kept);
}

function allStrings(items: readonly unknown[]): boolean {
  for (let i = 0; i < items.length; i++) if (typeof items[i] !== 'string') return false;
  return true;
}
