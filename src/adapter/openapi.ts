/**
 * Permissions in OpenAPI: a route audit written into an OpenAPI 3.0 or 3.1 document, so that what
 * a client reads (and what a generated client sends) is what the guards enforce — the bearer
 * scheme and the 401, 403 and 503 answers on every guarded operation, the permissions each one
 * asks for, and nothing on a route no guard enforces (documenting a requirement that does not hold
 * would be a lie). Works on the document any generator produced (`@fastify/swagger`,
 * `@nestjs/swagger`, a hand-written file); the checks and the shapes it adds are in `./openapi-parts.ts`.
 */
import type { RouteAudit } from './audit/audit.js';
import {
  checkAudit, checkDocument, declaredPathParameters, fail, guardSecurity, IAM_BEARER, isObject, objectField, pathTemplate,
  PROBLEM_RESPONSES, problemComponents, type Json, type OpenApiDocument,
} from './openapi-parts.js';

/** The operation keys of a Path Item in OpenAPI 3.0 and 3.1; an audited route of another method is left out. */
const METHODS: ReadonlySet<string> = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

type Route = RouteAudit['routes'][number];

/**
 * Returns a copy of an OpenAPI 3.0 or 3.1 `document` (its `openapi` version kept; the input is not
 * changed) in which every operation of a route `audit` lists as guarded (`access` `'permission'` or
 * `'authenticated'`) requires the `iamBearer` scheme and documents the guard's answers:
 *
 * - `security: [{ iamBearer: [] }]`; a requirement the operation already had (its own, else the
 *   document's) is kept, `iamBearer` added to each of its alternatives, since the guard demands the
 *   token whatever else is asked for;
 * - `x-iam-permissions: [{ service, permission, resourceType? }]` on a `'permission'` route;
 * - `application/problem+json` responses 401 and 503 (403 too on a `'permission'` route), through
 *   `components.responses` (`IamUnauthorized`, `IamForbidden`, `IamUnavailable`, body schema
 *   `components.schemas.IamProblem`). A response the operation already has for one of these codes
 *   is kept as written, as is a component of one of these names (yours replaces ours).
 *
 * `components.securitySchemes.iamBearer` is `{ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }`.
 * `'public'` and `'unguarded'` routes get no security and no `x-iam-permissions`. An audited route
 * the document lacks is added, its path parameters declared (`in: path`, `required`, string) and
 * its responses: the guard's, or a `default` one for a route no guard enforces. An audit path matches
 * a document path of the same template whatever its parameter names (`/vehicle/{vin}` and
 * `/vehicle/{id}` are the same path to OpenAPI). Methods OpenAPI 3.0/3.1 cannot express are left
 * out. Everything else — other operations, other fields — stays as it was.
 *
 * @param document - an OpenAPI 3.0.x or 3.1.x document, as JSON (e.g. `fastify.swagger()`,
 *   `SwaggerModule.createDocument(…)`).
 * @param audit - what an adapter's `auditRoutes` returned.
 * @returns the annotated copy, of the same type as `document`.
 * @throws `TypeError` naming what is wrong: `document` is not an OpenAPI 3.0/3.1 object, a field
 *   the annotation touches has the wrong shape, or `audit` is not a route audit.
 */
export function annotateOpenApi<D extends object>(document: D, audit: RouteAudit): D {
  const routes = checkAudit(audit);
  const copy = checkDocument(document);
  const paths = isObject(copy.paths) ? copy.paths : (copy.paths = {});
  const byTemplate = indexPaths(paths);
  const used = { guarded: false, permission: false };
  for (const route of routes) {
    const method = route.method.toLowerCase();
    if (!METHODS.has(method)) continue;
    const key = pathKeyFor(paths, byTemplate, route.path, method);
    const item = pathItem(paths, key);
    const existing = Object.hasOwn(item, method) ? item[method] : undefined;
    if (existing !== undefined && !isObject(existing)) fail(`document.paths[${quote(key)}].${method} is not an Operation object`);
    const operation = existing ?? (item[method] = newOperation(copy, item, key, route.access));
    if (route.access === 'permission' || route.access === 'authenticated') {
      annotate(copy, operation, `document.paths[${quote(key)}].${method}`, route);
      used.guarded = true;
      used.permission ||= route.access === 'permission';
    }
  }
  const components = isObject(copy.components) ? copy.components : (copy.components = {});
  const schemes = objectField(components, 'securitySchemes', 'document.components');
  // A scheme of that name the document had keeps its description and extensions, not its kind.
  const existing = Object.hasOwn(schemes, IAM_BEARER) ? schemes[IAM_BEARER] : undefined;
  const kept = isObject(existing) ? Object.entries(existing).filter(([k]) => k === 'description' || k.startsWith('x-')) : [];
  schemes[IAM_BEARER] = { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', ...Object.fromEntries(kept) };
  if (used.guarded) problemComponents(components, used.permission);
  return copy as D;
}

/** The document's paths of one template: the first, and for each method the first that has it. */
interface SameTemplate {
  readonly first: string;
  readonly byMethod: Map<string, string>;
}

/** Template (`/vehicle/{}`) → the document's paths of that template; built once, so that matching is linear. */
function indexPaths(paths: Record<string, Json>): Map<string, SameTemplate> {
  const byTemplate = new Map<string, SameTemplate>();
  for (const key of Object.keys(paths)) {
    if (key.startsWith('x-')) continue;
    if (!key.startsWith('/')) fail(`document.paths has a key ${quote(key)} that is not a path (a path starts with "/")`);
    const template = pathTemplate(key);
    let same = byTemplate.get(template);
    if (!same) byTemplate.set(template, same = { first: key, byMethod: new Map() });
    const item = paths[key];
    if (!isObject(item)) continue;
    for (const method of Object.keys(item)) if (METHODS.has(method) && !same.byMethod.has(method)) same.byMethod.set(method, key);
  }
  return byTemplate;
}

/**
 * The document path a route goes to: of its template, the audit's own spelling if it has the
 * method, else the first that has the method, else the audit's own spelling, else the first; with
 * none of its template, the audit's path, added.
 */
function pathKeyFor(paths: Record<string, Json>, byTemplate: Map<string, SameTemplate>, path: string, method: string): string {
  const template = pathTemplate(path);
  const same = byTemplate.get(template);
  if (!same) {
    byTemplate.set(template, { first: path, byMethod: new Map([[method, path]]) });
    paths[path] = {};
    return path;
  }
  // Of the same template by construction: an own key is the audit's spelling.
  const exact = Object.hasOwn(paths, path);
  const item = exact ? paths[path] : undefined;
  const key = exact && isObject(item) && Object.hasOwn(item, method) ? path : same.byMethod.get(method) ?? (exact ? path : same.first);
  if (!same.byMethod.has(method)) same.byMethod.set(method, key);
  return key;
}

function pathItem(paths: Record<string, Json>, key: string): Record<string, Json> {
  const item = paths[key];
  if (!isObject(item)) fail(`document.paths[${quote(key)}] is not a Path Item object`);
  // Adding an operation to a referenced Path Item would change every path that references it.
  if (Object.hasOwn(item, '$ref')) fail(`document.paths[${quote(key)}] is a $ref: resolve it before annotating (the audit has a route on it)`);
  return item;
}

/** A new operation for an audited route the document lacks: its path parameters and responses. */
function newOperation(document: OpenApiDocument, item: Record<string, Json>, key: string, access: Route['access']): Record<string, Json> {
  const declared = declaredPathParameters(document, Object.hasOwn(item, 'parameters') ? item.parameters : undefined, `document.paths[${quote(key)}]`);
  const missing = [...key.matchAll(/\{([^}/]+)\}/g)].map((m) => m[1] as string).filter((name, i, all) => !declared.has(name) && all.indexOf(name) === i);
  const operation: Record<string, Json> = {};
  if (missing.length > 0) operation.parameters = missing.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  operation.responses = access === 'permission' || access === 'authenticated' ? {}
    : { default: { description: 'The route\'s answer (not documented by the application: the operation was added from the route audit)' } };
  return operation;
}

function annotate(document: OpenApiDocument, operation: Record<string, Json>, where: string, route: Route): void {
  const own = Object.hasOwn(operation, 'security');
  const inherited = Object.hasOwn(document, 'security') ? document.security : undefined;
  operation.security = guardSecurity(own ? operation.security : inherited, own ? `${where}.security` : 'document.security');
  if (route.access === 'permission') {
    operation['x-iam-permissions'] = route.permissions.map(({ service, permission, resourceType }) => ({
      service, permission, ...(resourceType === undefined ? {} : { resourceType }),
    }));
  }
  const responses = objectField(operation, 'responses', where);
  for (const [status, response] of PROBLEM_RESPONSES) {
    if (status === '403' && route.access !== 'permission') continue;
    if (!Object.hasOwn(responses, status)) responses[status] = { $ref: `#/components/responses/${response}` };
  }
}

function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
