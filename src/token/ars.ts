/**
 * Normalises the `ars` claim to `{ r, c, n }[]` of strings. Never throws, and only copies string
 * items into fresh arrays, so hostile claim keys (`__proto__`, `constructor`) go nowhere.
 */
import type { AccessReference } from '../types.js';

const EMPTY: readonly string[] = Object.freeze([]);

/**
 * `frozen`: every array in `value` is frozen already (the verifier froze the parsed payload), so
 * an array of strings is kept as it is instead of being checked with `Object.isFrozen` and copied.
 */
export function normalizeArs(value: unknown, frozen = false): AccessReference[] {
  if (!Array.isArray(value)) return [];
  const out: AccessReference[] = [];
  // Index loops: a hole reads as undefined and is skipped like any other non-object.
  for (let i = 0; i < value.length; i++) {
    const entry: unknown = value[i];
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) continue;
    out.push(
      Object.freeze({
        r: strings(entry, 'r', frozen),
        c: strings(entry, 'c', frozen),
        n: strings(entry, 'n', frozen),
      }),
    );
  }
  return out;
}

function strings(entry: object, field: 'r' | 'c' | 'n', frozen: boolean): readonly string[] {
  if (!Object.hasOwn(entry, field)) return EMPTY;
  const items = (entry as Record<string, unknown>)[field];
  if (!Array.isArray(items)) return EMPTY;
  // Frozen and nothing but strings: kept as it is, no copy. A hole reads as undefined, so an
  // array with holes is copied like any other.
  if ((frozen || Object.isFrozen(items)) && allStrings(items as unknown[])) return items as readonly string[];
  const kept: string[] = [];
  for (let i = 0; i < items.length; i++) {
    const item: unknown = items[i];
    if (typeof item === 'string') kept.push(item);
  }
  return Object.freeze(kept);
}

function allStrings(items: readonly unknown[]): boolean {
  for (let i = 0; i < items.length; i++) if (typeof items[i] !== 'string') return false;
  return true;
}
