/** Support for the `use…()` helpers that register a test file's hooks and hand back what they set. */

/** A value set by a hook; throws when read outside the hooks' reach (e.g. at import). */
export function defined<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`${name} is only set while a test runs`);
  return value;
}
