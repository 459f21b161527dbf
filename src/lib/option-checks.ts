/**
 * Option validation shared by `createAuthorizer` and `IamTokenClient`: each check throws a
 * `TypeError` that names the component and the option.
 */

export interface OptionChecks {
  /** An http(s) URL without credentials; `base` also refuses a query or fragment (paths are appended to it). */
  httpUrl: (name: string, value: unknown, kind?: 'base' | 'endpoint') => string;
  /** A positive safe integer, or `fallback` when `undefined`. */
  positiveInt: (name: string, value: unknown, fallback: number) => number;
  /** A non-negative safe integer, or `fallback` when `undefined`. */
  nonNegativeInt: (name: string, value: unknown, fallback: number) => number;
  /**
   * Refuses members of `value` not in `known`, and members set to `null` (only `undefined` means
   * "the default"); `name` prefixes them (`jwks.cacheMaxAge`).
   */
  onlyKnown: (name: string | undefined, value: object, known: Iterable<string>) => void;
  /** Throws the component's `TypeError` with `message`. */
  fail: (message: string) => never;
}

/** The one wording of a `null` option, everywhere options are taken: only `undefined` means "the default". */
export function nullOptionMessage(where: string, name: string): string {
  return `${where}: "${name}" must not be null (leave it out, or pass undefined, for the default)`;
}

/** Throws the library's `TypeError` for a `null` option (`<where>: "<name>" must not be null …`) for the first of `names` whose value in `values` is `null`. */
export function refuseNulls(where: string, values: object, names: Iterable<string> = Object.keys(values)): void {
  for (const name of names) {
    if ((values as Record<string, unknown>)[name] === null) throw new TypeError(nullOptionMessage(where, name));
  }
}

export function optionChecks(component: string): OptionChecks {
  const fail = (message: string): never => {
    throw new TypeError(`${component}: ${message}`);
  };
  return {
    fail,
    httpUrl(name, value, kind = 'endpoint') {
      if (typeof value !== 'string') return fail(`"${name}" must be a URL string`);
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return fail(`"${name}" is not a valid URL`);
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`"${name}" must be an http(s) URL`);
      if (url.username || url.password) fail(`"${name}" must not carry credentials`);
      if (kind === 'base' && (url.search || url.hash)) fail(`"${name}" must not carry a query or a fragment`);
      return value;
    },
    positiveInt(name, value, fallback) {
      if (value === undefined) return fallback;
      if (!Number.isSafeInteger(value) || (value as number) <= 0) fail(`"${name}" must be a positive integer`);
      return value as number;
    },
    nonNegativeInt(name, value, fallback) {
      if (value === undefined) return fallback;
      if (!Number.isSafeInteger(value) || (value as number) < 0) fail(`"${name}" must be a non-negative integer`);
      return value as number;
    },
    onlyKnown(name, value, known) {
      const allowed = new Set(known);
      for (const key of Object.keys(value)) {
        const path = name === undefined ? key : `${name}.${key}`;
        if (!allowed.has(key)) fail(`unknown option "${path}"`);
        if ((value as Record<string, unknown>)[key] === null) throw new TypeError(nullOptionMessage(component, path));
      }
    },
  };
}
