/**
 * The console's token routes: minting a token for a configured actor, and the decision explorer's
 * two questions about a token — one decision explained, and the resources it may act on — asked of
 * the library's own Authorizer through the {@link Explainer}.
 */
import type { Explainer } from './explain.js';
import type { ConsoleHost } from './host.js';
import { json, problem, readJsonBody, record, type ConsoleRequest, type ConsoleResponse } from './http.js';

/** The token routes of one console; {@link createTokenRoutes} makes them. */
export interface TokenRoutes {
  /** `POST /tokens`: a token for an actor in one of its tenants, with its header and claims decoded. */
  mint(req: ConsoleRequest): Promise<ConsoleResponse>;
  /** `POST /explain`: the decision for one resource, or the authentication error. */
  explain(req: ConsoleRequest): Promise<ConsoleResponse>;
  /** `POST /accessible`: the references of one kind in the token that the permission allows. */
  accessible(req: ConsoleRequest): Promise<ConsoleResponse>;
}

/** The routes over `host`, asking `explainer` the decision explorer's questions. */
export function createTokenRoutes(host: ConsoleHost, explainer: Explainer, maxBodyBytes: number): TokenRoutes {
  async function mint(req: ConsoleRequest): Promise<ConsoleResponse> {
    const body = await readJsonBody(req, maxBodyBytes);
    if (!('value' in body)) return body;
    const input = record(body.value);
    if (!input) return problem(400, 'body must be a JSON object', { field: '$' });
    const { actor: actorId, tenantId, expiryInSecs } = input;
    const actor = host.getConfig().actors.find((a) => a.id === actorId);
    if (typeof actorId !== 'string' || !actor) return problem(400, '"actor" must be the id of a configured actor', { field: 'actor' });
    if (typeof tenantId !== 'string' || !Object.hasOwn(actor.tenants, tenantId)) return problem(400, `"tenantId" must be one of the actor's tenants`, { field: 'tenantId' });
    if (!Number.isSafeInteger(expiryInSecs) || (expiryInSecs as number) < 1 || (expiryInSecs as number) > host.maxExpirySec) {
      return problem(400, `"expiryInSecs" must be an integer from 1 to ${host.maxExpirySec}`, { field: 'expiryInSecs' });
    }
    const token = host.mintToken({ actor: actorId, tenantId, expiryInSecs: expiryInSecs as number });
    const [header = '', payload = ''] = token.split('.');
    return json(200, { token, header: decodePart(header), claims: decodePart(payload) });
  }

  /** The body of a decision query: a JSON object whose token, service and permission are non-empty strings. */
  async function queryBody(req: ConsoleRequest): Promise<{ input: Record<string, unknown> } | ConsoleResponse> {
    const body = await readJsonBody(req, maxBodyBytes);
    if (!('value' in body)) return body;
    const input = record(body.value);
    if (!input) return problem(400, 'body must be a JSON object', { field: '$' });
    return stringFields(input, ['token', 'service', 'permission']) ?? { input };
  }

  async function explain(req: ConsoleRequest): Promise<ConsoleResponse> {
    const query = await queryBody(req);
    if (!('input' in query)) return query;
    const { input } = query;
    const resource = record(input.resource);
    const type = resource?.type;
    const value = resource?.value;
    const node = resource?.node;
    if (typeof node === 'string' && node.length > 0) {
      return json(200, await explainer.explain({ token: input.token as string, service: input.service as string, permission: input.permission as string, resource: { node } }));
    }
    if (typeof type !== 'string' || type.length === 0 || type.includes('=')) return problem(400, '"resource.type" must be a non-empty reference type without "=" (or give "resource.node")', { field: 'resource.type' });
    if (typeof value !== 'string' || value.length === 0) return problem(400, '"resource.value" must be a non-empty string', { field: 'resource.value' });
    return json(200, await explainer.explain({ token: input.token as string, service: input.service as string, permission: input.permission as string, resource: { type, value } }));
  }

  async function accessible(req: ConsoleRequest): Promise<ConsoleResponse> {
    const query = await queryBody(req);
    if (!('input' in query)) return query;
    const { input } = query;
    const { type } = input;
    if (type !== undefined && (typeof type !== 'string' || type.length === 0 || type.includes('='))) {
      return problem(400, '"type" must be a non-empty reference type without "=" (omit it for node ids)', { field: 'type' });
    }
    return json(200, await explainer.accessible({
      token: input.token as string, service: input.service as string, permission: input.permission as string, ...(type === undefined ? {} : { type }),
    }));
  }

  return { mint, explain, accessible };
}

function stringFields(input: Record<string, unknown>, names: string[]): ConsoleResponse | undefined {
  for (const name of names) {
    const v = input[name];
    if (typeof v !== 'string' || v.length === 0) return problem(400, `"${name}" must be a non-empty string`, { field: name });
  }
  return undefined;
}

function decodePart(part: string): unknown {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}
