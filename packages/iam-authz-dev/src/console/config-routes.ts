/**
 * The console's configuration routes: the configuration with a strong ETag, validation without
 * saving, and the one way a change is made — If-Match against the version in force, the config
 * file's validation, an atomic save of the file (when there is one), then the change in force.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { DevIamConfigError, validateConfig, type DevIamConfig } from '../config.js';
import type { ConsoleHost } from './host.js';
import { json, problem, readJsonBody, record, type ConsoleRequest, type ConsoleResponse } from './http.js';
import { writeFileAtomic } from './save-file.js';
import { csrfRefused, type Sessions } from './security.js';

/** A change: the proposed configuration from the request's body and a copy of the one in force, or a refusal. */
export type ConfigChange = (body: unknown, current: DevIamConfig) => unknown;

/** The configuration routes of one console; {@link createConfigRoutes} makes them. */
export interface ConfigRoutes {
  /** `GET /config`: the configuration and its ETag, 304 on a matching If-None-Match. */
  get(req: ConsoleRequest): ConsoleResponse;
  /** `POST /config/validate`: the body checked as the config file would be, nothing saved. */
  validate(req: ConsoleRequest): Promise<ConsoleResponse>;
  /** `PUT` of the configuration, a role or an actor: `change` applied to the version in force. */
  mutate(req: ConsoleRequest, change: ConfigChange): Promise<ConsoleResponse>;
}

/** The routes over `host`; `changed` is called after each change put in force. */
export function createConfigRoutes(host: ConsoleHost, sessions: Sessions, maxBodyBytes: number, changed: () => void): ConfigRoutes {
  // Saves are serialised: the If-Match check and the write must see the same current version.
  let saving: Promise<unknown> = Promise.resolve();

  function getConfig(req: ConsoleRequest): ConsoleResponse {
    const config = host.getConfig();
    const etag = etagOf(config);
    if (matches(req.headers['if-none-match'], etag)) return { status: 304, headers: { etag, 'cache-control': 'no-store' }, body: '' };
    return json(200, config, { etag });
  }

  async function validate(req: ConsoleRequest): Promise<ConsoleResponse> {
    const body = await readJsonBody(req, maxBodyBytes);
    if (!('value' in body)) return body;
    try {
      validateConfig(body.value);
    } catch (error) {
      if (error instanceof DevIamConfigError) return invalid(error);
      throw error;
    }
    return json(200, { valid: true });
  }

  /**
   * The one way a change is made: If-Match against the current version, the same validation as the
   * config file, an atomic save to the file (when there is one), then the change put in force.
   */
  async function mutate(req: ConsoleRequest, change: ConfigChange): Promise<ConsoleResponse> {
    if (!sessions.verify(req)) return csrfRefused();
    const ifMatch = req.headers['if-match'];
    if (ifMatch === undefined) return problem(428, 'If-Match is required: send the ETag of GET /console/api/config');
    const body = await readJsonBody(req, maxBodyBytes);
    if (!('value' in body)) return body;
    const run = saving.then(() => commit(ifMatch, body.value, change));
    saving = run.catch(() => undefined);
    return run;
  }

  async function commit(ifMatch: string, body: unknown, change: ConfigChange): Promise<ConsoleResponse> {
    const current = host.getConfig();
    const currentEtag = etagOf(current);
    if (!matches(ifMatch, currentEtag)) {
      return problem(409, 'the configuration was changed since you loaded it (another tab, a script or the file); reload it and apply your change again', { currentEtag }, { etag: currentEtag });
    }
    let next: DevIamConfig;
    try {
      const proposed = change(body, structuredClone(current));
      if (isResponse(proposed)) return proposed;
      next = validateConfig(proposed);
    } catch (error) {
      if (error instanceof DevIamConfigError) return invalid(error);
      throw error;
    }
    if (host.configFile !== undefined) {
      // A hand edit of the file that was not reloaded (npm start does not watch it) is not overwritten either.
      const onDisk = await readConfigFile(host.configFile);
      if (onDisk.config === undefined || etagOf(onDisk.config) !== currentEtag) {
        return problem(409, 'the config file on disk differs from the configuration in force (edited by hand and not reloaded?); reload or restore the file, then apply your change again', { currentEtag }, { etag: currentEtag });
      }
      try {
        await writeFileAtomic(host.configFile, fileText(onDisk.members, next));
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        return problem(500, `the config file could not be saved${typeof code === 'string' ? ` (${code})` : ''}; nothing was changed`);
      }
    }
    host.setConfig(next);
    changed();
    return json(200, host.getConfig(), { etag: etagOf(host.getConfig()) });
  }

  return { get: getConfig, validate, mutate };
}

/** A strong ETag over the configuration's canonical JSON. */
export function etagOf(config: DevIamConfig): string {
  return `"${createHash('sha256').update(JSON.stringify(config)).digest('base64url').slice(0, 22)}"`;
}

/** RFC 9110 list match for If-Match / If-None-Match: `*` or one of the listed tags, compared exactly (the console's tags are strong). */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag;
  });
}

function invalid(error: DevIamConfigError): ConsoleResponse {
  return problem(400, error.message, { field: error.path });
}

function isResponse(value: unknown): value is ConsoleResponse {
  return value instanceof ConsoleProblem;
}

/** A refusal from a change function (e.g. an unknown application), distinguished from a config. */
class ConsoleProblem implements ConsoleResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  constructor(response: ConsoleResponse) {
    this.status = response.status;
    this.headers = response.headers;
    this.body = response.body as string;
  }
}

/** The change of `PUT /applications/:id/roles/:key`: the role added or replaced; 404 for an unknown application. */
export function putRole(config: DevIamConfig, applicationId: string, roleKey: string, body: unknown): unknown {
  const app = config.applications.find((a) => a.id === applicationId);
  if (!app) return new ConsoleProblem(problem(404, `no application "${applicationId}"`));
  const role = { key: roleKey, permissions: record(body)?.permissions };
  const index = app.roles.findIndex((r) => r.key === roleKey);
  if (index === -1) app.roles.push(role as never);
  else app.roles[index] = role as never;
  return config;
}

/** The change of `PUT /actors/:id`: the actor added or replaced; its `id`, if given, must match the path. */
export function putActor(config: DevIamConfig, actorId: string, body: unknown): unknown {
  const actor = record(body);
  if (!actor) return new ConsoleProblem(problem(400, 'body must be a JSON object', { field: '$' }));
  if (actor.id !== undefined && actor.id !== actorId) return new ConsoleProblem(problem(400, '"id" must match the path', { field: 'id' }));
  const next = { ...actor, id: actorId };
  const index = config.actors.findIndex((a) => a.id === actorId);
  if (index === -1) config.actors.push(next as never);
  else config.actors[index] = next as never;
  return config;
}

/** The config file as it is now: its validated configuration (`undefined` when unreadable or invalid) and its top-level members. */
async function readConfigFile(file: string): Promise<{ config: DevIamConfig | undefined; members: Record<string, unknown> }> {
  try {
    const members = record(JSON.parse(await readFile(file, 'utf8'))) ?? {};
    try {
      return { config: validateConfig(members), members };
    } catch {
      return { config: undefined, members };
    }
  } catch {
    return { config: undefined, members: {} };
  }
}

/** The file's new text: its other top-level members (e.g. `$schema`, notes) are kept. */
function fileText(members: Record<string, unknown>, next: DevIamConfig): string {
  return `${JSON.stringify({ ...members, ...next }, null, 2)}\n`;
}
