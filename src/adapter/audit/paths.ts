/**
 * Route paths as frameworks write them, in the OpenAPI template form the audit reports:
 * `/fleet` + `/vehicle/:vin` → `/fleet/vehicle/{vin}`.
 */

/**
 * `prefix` and `path` joined with one slash, without a trailing slash (the root stays `/`), the
 * `:name` parameters (with a pattern `:id(\\d+)` or `:id{[0-9]+}`, or optional `:name?`) as `{name}`.
 */
export function openApiPath(...parts: readonly string[]): string {
  const joined = parts.filter((p) => p.length > 0).map((p) => p.replace(/^\/+|\/+$/g, '')).filter((p) => p.length > 0).join('/');
  const templated = joined.replace(/:([A-Za-z0-9_]+)(\([^)]*\)|\{[^}]*\})?\??/g, '{$1}');
  return `/${templated}`;
}

/** The parameter names of an OpenAPI path, in order: `/a/{x}/b/{y}` → `['x', 'y']`. */
export function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
}
