/**
 * The pieces `annotateOpenApi` (`./openapi.ts`) is made of: the checks of its two arguments (a
 * `TypeError` naming what is wrong, never a half-annotated document), and what it writes — the
 * security requirement, the problem+json responses and the parameters of an added operation.
 * Documents are JSON: every key read from one is read as an own property, and every object
 * written is a fresh one, so that neither a `__proto__` key nor a later change to the result
 * reaches anything else.
 */
import type { RouteAudit } from './audit/audit.js';

/** A value of a JSON document. */
export type Json = unknown;
/** An OpenAPI document, as far as the annotation reads it. */
export type OpenApiDocument = Record<string, Json>;
type Route = RouteAudit['routes'][number];

/** The name of the security scheme the guards' bearer token is documented as. */
export const IAM_BEARER = 'iamBearer';

/** The answers of a guard: status and the name of its `components.responses` entry. */
export const PROBLEM_RESPONSES: readonly (readonly ['401' | '403' | '503', string])[] = [
  ['401', 'IamUnauthorized'], ['403', 'IamForbidden'], ['503', 'IamUnavailable'],
];

const ACCESS: ReadonlySet<unknown> = new Set(['permission', 'authenticated', 'public', 'unguarded']);

export function fail(message: string): never {
  throw new TypeError(`annotateOpenApi: ${message}`);
}

/** A JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A path's template, its parameter names left out: `/vehicle/{vin}` → `/vehicle/{}`. */
export function pathTemplate(path: string): string {
  return path.replace(/\{[^}/]*\}/g, '{}');
}

/** `parent[field]`, an object: created when absent, a `TypeError` naming it when it is anything else. */
export function objectField(parent: Record<string, Json>, field: string, where: string): Record<string, Json> {
  const value = Object.hasOwn(parent, field) ? parent[field] : undefined;
  if (value === undefined) return (parent[field] = {});
  if (!isObject(value)) fail(`${where}.${field} is not an object`);
  return value;
}

/** The audit's routes, each checked; a `TypeError` names the first that is not a route. */
export function checkAudit(audit: unknown): readonly Route[] {
  if (!isObject(audit) || !Array.isArray(audit.routes)) fail('"audit" must be a route audit ({ routes, findings }, as auditRoutes returns it)');
  const routes = audit.routes as unknown[];
  for (let i = 0; i < routes.length; i++) {
    const route = routes[i];
    const at = `audit.routes[${i}]`;
    if (!isObject(route)) fail(`${at} is not an object`);
    if (typeof route.method !== 'string' || !/^[A-Za-z]+$/.test(route.method)) fail(`${at}.method is not an HTTP method`);
    if (typeof route.path !== 'string' || !route.path.startsWith('/')) fail(`${at}.path is not a path (a path starts with "/")`);
    if (!ACCESS.has(route.access)) fail(`${at}.access is not 'permission', 'authenticated', 'public' or 'unguarded'`);
    const { permissions } = route;
    if (!Array.isArray(permissions) || !permissions.every(isPermission)) fail(`${at}.permissions is not an array of { service, permission, resourceType? }`);
    if ((permissions.length > 0) !== (route.access === 'permission')) fail(`${at}: a route has permissions exactly when its access is 'permission'`);
  }
  return routes as Route[];
}

function isPermission(value: unknown): boolean {
  return isObject(value) && typeof value.service === 'string' && typeof value.permission === 'string'
    && (value.resourceType === undefined || typeof value.resourceType === 'string');
}

/** A deep copy of `document`, after checking that it is an OpenAPI 3.0 or 3.1 document. */
export function checkDocument(document: unknown): OpenApiDocument {
  if (!isObject(document)) fail(`"document" must be an OpenAPI 3.0 or 3.1 document (an object), not ${document === null ? 'null' : Array.isArray(document) ? 'an array' : typeof document}`);
  if (!Object.hasOwn(document, 'openapi')) {
    fail(Object.hasOwn(document, 'swagger') ? 'document is Swagger 2.0 ("swagger" field): only OpenAPI 3.0.x and 3.1.x are supported' : 'document has no "openapi" field: not an OpenAPI 3.0 or 3.1 document');
  }
  const version = document.openapi;
  if (typeof version !== 'string' || !/^3\.[01]\.\d+(-.+)?$/.test(version)) {
    const shown = typeof version === 'string' ? JSON.stringify(version.slice(0, 20)) : typeof version;
    fail(`document.openapi is ${shown}: only OpenAPI 3.0.x and 3.1.x are supported`);
  }
  for (const field of ['paths', 'components'] as const) {
    const value = Object.hasOwn(document, field) ? document[field] : undefined;
    if (value !== undefined && !isObject(value)) fail(`document.${field} is not an object`);
  }
  try {
    return structuredClone(document);
  } catch (error) {
    // A function or a symbol is no JSON; nesting deep enough exhausts the stack.
    return fail(`document cannot be copied, it is not plain JSON (${error instanceof Error ? error.name : 'error'})`);
  }
}

/**
 * The security of a guarded operation: `existing` (the operation's own, else the document's) with
 * `iamBearer` in each alternative, since the guard demands the token whatever else is asked for;
 * `[{ iamBearer: [] }]` when there was none, or only "no security" alternatives.
 */
export function guardSecurity(existing: Json, where: string): Json[] {
  const bearer = (): Record<string, Json> => ({ [IAM_BEARER]: [] });
  if (existing === undefined) return [bearer()];
  if (!Array.isArray(existing)) fail(`${where} is not an array`);
  const merged: Json[] = [];
  const seen = new Set<string>();
  for (const alternative of existing as unknown[]) {
    if (!isObject(alternative)) fail(`${where} holds a security requirement that is not an object`);
    const one = { ...alternative, ...bearer() };
    const key = JSON.stringify(one);
    if (seen.has(key)) continue;
    seen.add(key);
    merged.push(one);
  }
  return merged.length > 0 ? merged : [bearer()];
}

/** The names of the path parameters a Path Item declares for all its operations (inline, or a local `$ref`). */
export function declaredPathParameters(document: OpenApiDocument, parameters: Json, where: string): Set<string> {
  const names = new Set<string>();
  if (parameters === undefined) return names;
  if (!Array.isArray(parameters)) fail(`${where}.parameters is not an array`);
  const shared = isObject(document.components) && isObject(document.components.parameters) ? document.components.parameters : {};
  for (let parameter of parameters as unknown[]) {
    const ref = isObject(parameter) ? parameter.$ref : undefined;
    if (typeof ref === 'string' && ref.startsWith('#/components/parameters/')) {
      const name = ref.slice('#/components/parameters/'.length).replaceAll('~1', '/').replaceAll('~0', '~');
      parameter = Object.hasOwn(shared, name) ? shared[name] : undefined;
    }
    if (isObject(parameter) && parameter.in === 'path' && typeof parameter.name === 'string') names.add(parameter.name);
  }
  return names;
}

/** Adds the problem schema and the guards' responses to `components`, each unless one of its name is there. */
export function problemComponents(components: Record<string, Json>, withForbidden: boolean): void {
  const schemas = objectField(components, 'schemas', 'document.components');
  if (!Object.hasOwn(schemas, 'IamProblem')) schemas.IamProblem = problemSchema();
  const responses = objectField(components, 'responses', 'document.components');
  for (const [status, name] of PROBLEM_RESPONSES) {
    if (status === '403' && !withForbidden) continue;
    if (!Object.hasOwn(responses, name)) responses[name] = problemResponse(status);
  }
}

/** RFC 9457 problem details, as the guards answer (`ProblemDetails` of `iam-authz/adapter`). Valid in 3.0 and 3.1. */
function problemSchema(): Record<string, Json> {
  const text = (description: string): Record<string, Json> => ({ type: 'string', description });
  return {
    type: 'object',
    description: 'An iam-authz guard\'s refusal (RFC 9457 problem details).',
    required: ['type', 'title', 'status', 'detail', 'code'],
    properties: {
      type: text('Always about:blank: `code` says what happened.'),
      title: text('The HTTP reason phrase of `status`.'),
      status: { type: 'integer', enum: [401, 403, 503] },
      detail: text('What went wrong, for a human; never contains the token.'),
      code: text('The stable error code, e.g. ERR_TOKEN_EXPIRED, ERR_PERMISSION_DENIED, ERR_POLICY_UNAVAILABLE.'),
      decision: { type: 'object', description: 'The denial\'s decision (roles, reason, changeId); only when the guard sets exposeDecision.' },
    },
  };
}

function problemResponse(status: '401' | '403' | '503'): Record<string, Json> {
  const header = (description: string): Record<string, Json> => ({ description, schema: { type: 'string' } });
  const [description, headers] = status === '401'
    ? ['No bearer token, or one that is malformed, badly signed, expired or not issued for this service.',
      { 'WWW-Authenticate': header('The RFC 6750 Bearer challenge, e.g. Bearer realm="iam", error="invalid_token".') }]
    : status === '403'
      ? ['The token is valid, but no role it holds on the resource grants the permission the route asks for (x-iam-permissions).',
        { 'WWW-Authenticate': header('The RFC 6750 Bearer challenge, e.g. Bearer realm="iam", error="insufficient_scope".') }]
      : ['The IAM\'s keys or role policy cannot be read just now: retry later.',
        { 'Retry-After': header('Seconds to wait before retrying.') }];
  return { description, headers, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/IamProblem' } } } };
}
