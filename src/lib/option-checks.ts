/**
 * Option validation shared by `createAuthorizer` and `IamTokenClient`: each check throws a
 * `TypeError` that names the component and the option. Every component of the authorizer checks
 * its own options with {@link authorizerChecks}, from here below it.
 */
import { isArray } from './is-array.js';

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
  /** A non-empty array of non-empty strings, or `fallback` when `undefined`. */
  stringList: (name: string, value: unknown, fallback: readonly string[]) => string[];
  /**
   * issuer → URL for an option that is a URL (a single issuer) or a map from issuer to URL (the
   * `jwksUri` and `policyUrl` options): a map may name only accepted issuers; an issuer it does not
   * name gets `fallback(issuer)`, or no URL when that is `undefined`.
   */
  perIssuerUrls: (name: string, issuers: readonly string[], option: unknown, fallback: (issuer: string) => string | undefined) => Map<string, string>;
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
  const httpUrl: OptionChecks['httpUrl'] = (name, value, kind = 'endpoint') => {
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
  };
  return {
    fail,
    httpUrl,
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
    stringList(name, value, fallback) {
      if (value === undefined) return [...fallback];
      if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v.length > 0)) {
        fail(`"${name}" must be a non-empty array of non-empty strings`);
      }
      return [...(value as string[])];
    },
    perIssuerUrls(name, issuers, option, fallback) {
      const urls = new Map<string, string>();
      if (typeof option === 'string') {
        if (issuers.length > 1) fail(`with several issuers, "${name}" must map each issuer to its URL`);
        urls.set(issuers[0] as string, httpUrl(name, option));
        return urls;
      }
      if (option !== undefined && (typeof option !== 'object' || option === null || isArray(option))) {
        fail(`"${name}" must be a URL or a map from issuer to URL`);
      }
      const map = (option ?? {}) as Record<string, unknown>;
      for (const key of Object.keys(map)) {
        if (!issuers.includes(key)) fail(`"${name}" names "${key}", which is not an accepted issuer`);
      }
      for (const issuer of issuers) {
        const url = Object.hasOwn(map, issuer) ? httpUrl(`${name}["${issuer}"]`, map[issuer]) : fallback(issuer);
        if (url !== undefined) urls.set(issuer, url);
      }
      return urls;
    },
  };
}

/** The checks of every component of the authorizer: their `TypeError`s start `createAuthorizer:`, the name users call. */
export const authorizerChecks: OptionChecks = optionChecks('createAuthorizer');
