/**
 * "Which resources may this caller act on?" answered from the token alone: the token's `ars` lists
 * every reference the caller has roles on, and the compiled policy says which roles grant the
 * permission. One pass over `ars`, each role looked up once: O(size of `ars`), no I/O. Agrees with
 * the per-resource check by construction — a value is listed exactly when some access reference
 * naming it holds a role that grants (spec §7 steps 4–7).
 */
import type { CompiledPolicy } from './compile-policy.js';
import type { AccessReference } from '../types.js';

/** Which references to list: custom references of one type (`TYPE=`) or node ids. */
export interface AccessibleSelector {
  readonly field: 'c' | 'n';
  /** `TYPE=` for custom references; `undefined` for node ids. */
  readonly prefix: string | undefined;
}

/** value → the roles that grant the permission on it (deduplicated, in order of appearance). */
export type AccessibleMap = Map<string, string[]>;

export function accessibleValues(
  ars: readonly AccessReference[],
  selector: AccessibleSelector,
  service: string,
  permission: string,
  policy: CompiledPolicy,
): AccessibleMap {
  const grants = new Map<string, boolean>();
  const out: AccessibleMap = new Map();
  const { field, prefix } = selector;
  for (const entry of ars) {
    let granting: string[] | undefined;
    for (const role of entry.r) {
      let grantsHere = grants.get(role);
      if (grantsHere === undefined) {
        grantsHere = policy.roles.get(role)?.get(service)?.has(permission) === true;
        grants.set(role, grantsHere);
      }
      if (grantsHere && !granting?.includes(role)) (granting ??= []).push(role);
    }
    if (!granting) continue;
    for (const ref of entry[field]) {
      let value = ref;
      if (prefix !== undefined) {
        // An empty value (`VIN=`) names no resource, as in the per-resource check.
        if (ref.length <= prefix.length || !ref.startsWith(prefix)) continue;
        value = ref.slice(prefix.length);
      } else if (ref.length === 0) continue;
      const roles = out.get(value);
      if (!roles) out.set(value, [...granting]);
      else for (const role of granting) if (!roles.includes(role)) roles.push(role);
    }
  }
  return out;
}

/** Whether any access reference of the token is of the selected kind (if none, no policy is needed). */
export function namesAny(ars: readonly AccessReference[], selector: AccessibleSelector): boolean {
  const { field, prefix } = selector;
  for (const entry of ars) {
    for (const ref of entry[field]) {
      if (prefix === undefined ? ref.length > 0 : ref.length > prefix.length && ref.startsWith(prefix)) return true;
    }
  }
  return false;
}
