/**
 * The development IAM's configuration: IdPs, applications (service definitions and roles) and
 * actors. Validated as a whole; every error names the path of the bad field.
 */

/** An IdP whose tokens are verified against its issuer and keys. */
export interface ExternalIdpConfig {
  /** Referenced by the token request's `idp-key` header and by actors' `idp`. */
  key: string;
  /** Expected `iss` of the IdP's tokens. */
  issuer: string;
  /** Where the IdP's keys are; or give them inline as `jwks`. */
  jwksUri?: string;
  /** The IdP's keys inline, instead of `jwksUri`. */
  jwks?: {
    /** The IdP's public JWKs. */
    keys: object[];
  };
  /** Expected `aud` of IdP tokens, when set. */
  audience?: string | string[];
}

/** The development IAM acts as its own IdP (`POST /dev-idp/token`). */
export interface BuiltinIdpConfig {
  /** Referenced by the token request's `idp-key` header and by actors' `idp`. */
  key: string;
  /** Marks the built-in IdP. */
  builtin: true;
}

/** An IdP entry: external, or the built-in one. */
export type IdpConfig = ExternalIdpConfig | BuiltinIdpConfig;

/** An application: its services with their permissions, and its roles. */
export interface ApplicationConfig {
  /** Application id (the token's `app`). */
  id: string;
  /** The services and the permission keys each one knows. */
  serviceDefinitions: {
    /** Service key, e.g. `vehicle-service`. */
    key: string;
    /** Permission keys, e.g. `READ`. */
    permissions: string[];
  }[];
  /** `permissions` maps a service definition key to the permission keys the role grants there. */
  roles: {
    /** Role key, as in `ars[].r`. */
    key: string;
    /** Service key → granted permission keys. */
    permissions: Record<string, string[]>;
  }[];
}

/** An access reference an actor holds in a tenant; becomes an `ars` element. */
export interface AccessReferenceConfig {
  /** Role keys. */
  r: string[];
  /** Custom resource references, each `TYPE=value`. */
  c?: string[];
  /** Node ids. */
  n?: string[];
}

/** A person or machine that can obtain tokens. */
export interface ActorConfig {
  /** Becomes the token's `sub`. */
  id: string;
  /** Key of the IdP the actor signs in with. */
  idp: string;
  /** The IdP token's `sub` that maps to this actor. */
  subject: string;
  /** Becomes the token's `acc`. */
  account: string;
  /** Application id; becomes the token's `app`. */
  application: string;
  /** Tenant id → the actor's access references in that tenant. */
  tenants: Record<string, AccessReferenceConfig[]>;
}

/** The development IAM's configuration. */
export interface DevIamConfig {
  /** Identity providers whose tokens the token endpoint accepts. */
  idps: IdpConfig[];
  /** Applications and their role policies. */
  applications: ApplicationConfig[];
  /** Who can obtain tokens, and their access references per tenant. */
  actors: ActorConfig[];
}

/** Thrown for an invalid configuration; `path` names the bad field, e.g. `actors[0].idp`. */
export class DevIamConfigError extends Error {
  /** Path of the bad field, e.g. `actors[0].idp`. */
  readonly path: string;
  constructor(path: string, mistake: string) {
    super(`invalid dev IAM config at ${path}: ${mistake}`);
    this.name = 'DevIamConfigError';
    this.path = path;
  }
}

type Obj = Record<string, unknown>;

/** Validates `value` and returns it typed; throws {@link DevIamConfigError} naming the first bad field. */
export function validateConfig(value: unknown): DevIamConfig {
  const root = object(value, '$', ['idps', 'applications', 'actors']);
  const idps = array(root.idps, 'idps').map((idp, i) => checkIdp(idp, `idps[${i}]`));
  unique(idps.map((i) => i.key), 'idps', 'key');
  const applications = array(root.applications, 'applications').map((app, i) => checkApplication(app, `applications[${i}]`));
  unique(applications.map((a) => a.id), 'applications', 'id');
  const actors = array(root.actors, 'actors').map((actor, i) => checkActor(actor, `actors[${i}]`, idps, applications));
  unique(actors.map((a) => a.id), 'actors', 'id');
  // One IdP subject maps to one actor; a second one would silently never be chosen.
  const subjects = new Set<string>();
  actors.forEach((a, i) => {
    const id = JSON.stringify([a.idp, a.subject]);
    if (subjects.has(id)) throw new DevIamConfigError(`actors[${i}].subject`, `duplicate subject "${a.subject}" of IdP "${a.idp}"`);
    subjects.add(id);
  });
  return { idps, applications, actors };
}

function checkIdp(value: unknown, path: string): IdpConfig {
  const idp = object(value, path, ['key', 'builtin', 'issuer', 'jwksUri', 'jwks', 'audience']);
  const key = string(idp.key, `${path}.key`);
  if (idp.builtin !== undefined) {
    if (idp.builtin !== true) throw new DevIamConfigError(`${path}.builtin`, `must be true when present${gotNull(idp.builtin, true)}`);
    return { key, builtin: true };
  }
  const out: ExternalIdpConfig = { key, issuer: string(idp.issuer, `${path}.issuer`) };
  if (idp.jwksUri !== undefined) {
    const uri = string(idp.jwksUri, `${path}.jwksUri`, true);
    // A URL the server could not parse would fail later, in startDevIam, after it started listening.
    if (!/^https?:\/\//.test(uri) || !URL.canParse(uri)) throw new DevIamConfigError(`${path}.jwksUri`, 'must be an http(s) URL');
    out.jwksUri = uri;
  }
  if (idp.jwks !== undefined) {
    const jwks = object(idp.jwks, `${path}.jwks`, ['keys'], true);
    array(jwks.keys, `${path}.jwks.keys`).forEach((k, i) => object(k, `${path}.jwks.keys[${i}]`));
    out.jwks = jwks as { keys: object[] };
  }
  if (out.jwksUri === undefined && out.jwks === undefined) throw new DevIamConfigError(path, 'needs "jwksUri" or "jwks" (or "builtin": true)');
  if (idp.audience !== undefined) {
    out.audience = typeof idp.audience === 'string' ? idp.audience : stringArray(idp.audience, `${path}.audience`, true);
    // An empty list would make every IdP token fail its audience check.
    if (out.audience.length === 0) throw new DevIamConfigError(`${path}.audience`, 'must be a non-empty string or a non-empty list');
  }
  return out;
}

function checkApplication(value: unknown, path: string): ApplicationConfig {
  const app = object(value, path, ['id', 'serviceDefinitions', 'roles']);
  const id = string(app.id, `${path}.id`);
  const serviceDefinitions = array(app.serviceDefinitions, `${path}.serviceDefinitions`).map((sd, i) => {
    const p = `${path}.serviceDefinitions[${i}]`;
    const def = object(sd, p, ['key', 'permissions']);
    return { key: string(def.key, `${p}.key`), permissions: stringArray(def.permissions, `${p}.permissions`) };
  });
  unique(serviceDefinitions.map((s) => s.key), `${path}.serviceDefinitions`, 'key');
  const services = new Map(serviceDefinitions.map((s) => [s.key, new Set(s.permissions)]));
  const roles = array(app.roles, `${path}.roles`).map((r, i) => {
    const p = `${path}.roles[${i}]`;
    const role = object(r, p, ['key', 'permissions']);
    const key = string(role.key, `${p}.key`);
    const grants = object(role.permissions, `${p}.permissions`);
    const permissions: Record<string, string[]> = {};
    for (const [service, list] of Object.entries(grants)) {
      const sp = `${p}.permissions.${service}`;
      const allowed = services.get(service);
      if (!allowed) throw new DevIamConfigError(sp, `"${service}" is not a service definition of application ${id}`);
      const keys = stringArray(list, sp);
      keys.forEach((k, j) => {
        if (!allowed.has(k)) throw new DevIamConfigError(`${sp}[${j}]`, `"${k}" is not a permission of service definition ${service}`);
      });
      Object.defineProperty(permissions, service, { value: keys, enumerable: true, writable: true, configurable: true });
    }
    return { key, permissions };
  });
  unique(roles.map((r) => r.key), `${path}.roles`, 'key');
  return { id, serviceDefinitions, roles };
}

function checkActor(value: unknown, path: string, idps: IdpConfig[], applications: ApplicationConfig[]): ActorConfig {
  const actor = object(value, path, ['id', 'idp', 'subject', 'account', 'application', 'tenants']);
  const idp = string(actor.idp, `${path}.idp`);
  if (!idps.some((i) => i.key === idp)) throw new DevIamConfigError(`${path}.idp`, `no IdP with key "${idp}"`);
  const application = string(actor.application, `${path}.application`);
  if (!applications.some((a) => a.id === application)) throw new DevIamConfigError(`${path}.application`, `no application "${application}"`);
  const tenants: Record<string, AccessReferenceConfig[]> = {};
  for (const [tenant, refs] of Object.entries(object(actor.tenants, `${path}.tenants`))) {
    const tp = `${path}.tenants.${tenant}`;
    const list = array(refs, tp).map((ref, i) => {
      const rp = `${tp}[${i}]`;
      const o = object(ref, rp, ['r', 'c', 'n']);
      // The same rules as the console page's inline checks (listMistake in console/web/actors-view.ts): a reference
      // with no roles grants nothing, and a custom reference is TYPE=value.
      const out: AccessReferenceConfig = { r: stringArray(o.r, `${rp}.r`) };
      if (out.r.length === 0) throw new DevIamConfigError(`${rp}.r`, 'needs at least one role');
      if (o.c !== undefined) {
        out.c = stringArray(o.c, `${rp}.c`, true);
        out.c.forEach((c, j) => {
          if (!/^[^=]+=.+$/s.test(c)) throw new DevIamConfigError(`${rp}.c[${j}]`, `"${c}" is not TYPE=value`);
        });
      }
      if (o.n !== undefined) out.n = stringArray(o.n, `${rp}.n`, true);
      if (!out.c && !out.n) throw new DevIamConfigError(rp, 'needs "c" or "n"');
      return out;
    });
    Object.defineProperty(tenants, tenant, { value: list, enumerable: true, writable: true, configurable: true });
  }
  return {
    id: string(actor.id, `${path}.id`),
    idp,
    subject: string(actor.subject, `${path}.subject`),
    account: string(actor.account, `${path}.account`),
    application,
    tenants,
  };
}

/** Added to a mistake when the value is `null`: never "default" (an optional member means it only when absent). */
function gotNull(value: unknown, optional = false): string {
  if (value !== null) return '';
  return optional ? ' (got null; leave the member out for the default)' : ' (got null)';
}

/** An object; with `known`, a member not in it is an error naming its path (a typo must not be ignored). */
function object(value: unknown, path: string, known?: readonly string[], optional = false): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DevIamConfigError(path, `must be an object${gotNull(value, optional)}`);
  if (known) {
    for (const key of Object.keys(value)) {
      // At the top level `$`-members (`$schema`, `$comment`) are annotations, kept by the console.
      if (!known.includes(key) && !(path === '$' && key.startsWith('$'))) throw new DevIamConfigError(path === '$' ? key : `${path}.${key}`, `unknown key (expected one of ${known.join(', ')})`);
    }
  }
  return value as Obj;
}

function array(value: unknown, path: string, optional = false): unknown[] {
  if (!Array.isArray(value)) throw new DevIamConfigError(path, `must be an array${gotNull(value, optional)}`);
  return value;
}

function string(value: unknown, path: string, optional = false): string {
  if (typeof value !== 'string' || value.length === 0) throw new DevIamConfigError(path, `must be a non-empty string${gotNull(value, optional)}`);
  return value;
}

function stringArray(value: unknown, path: string, optional = false): string[] {
  return array(value, path, optional).map((v, i) => string(v, `${path}[${i}]`));
}

function unique(values: string[], path: string, field: string): void {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (seen.has(v)) throw new DevIamConfigError(`${path}[${i}].${field}`, `duplicate "${v}"`);
    seen.add(v);
  });
}
