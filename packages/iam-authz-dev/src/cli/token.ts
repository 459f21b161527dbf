/**
 * `iam-authz token`: mints an IAM token from a RUNNING development IAM, over HTTP, as a service's
 * user would get one: an IdP token for the actor's subject from the built-in IdP (`/dev-idp/token`),
 * exchanged at the token endpoint for the tenant. Prints only the IAM token, so that
 * `TOKEN=$(iam-authz token …)` works; never prints the IdP token nor an answer's body.
 */
import type { DevIamConfig } from '../config.js';
import { MAX_EXPIRY_SEC } from '../dev-iam-core.js';
import { isLoopbackHost } from '../host-rule.js';
import { visible } from './terminal.js';
import { parse, required, UsageError } from './usage.js';

export const TOKEN_HELP = `usage: iam-authz token --iam URL --actor ID --tenant ID [--expiry SECS] [--allow-remote]

Mints an IAM token from a running development IAM ("iam-authz dev-server") and prints it, alone,
on stdout:  TOKEN=$(iam-authz token --iam http://localhost:4000 --actor actor-alice --tenant tenant-1)
It asks the built-in IdP (POST /dev-idp/token) for a token of the actor's subject and exchanges it at
POST /authentication/v1/tokens, as a real client would. The actor must sign in with the "builtin"
IdP; its id, IdP and tenants are read from the console API (GET /console/api/config).

options:
  --iam URL        base URL of the development IAM (the dev-server prints it)
  --actor ID       actor id (the token's sub), as in the config's "actors"
  --tenant ID      tenant the token is for; one of the actor's tenants
  --expiry SECS    lifetime in seconds (default 3600, at most ${MAX_EXPIRY_SEC})
  --allow-remote   allow a --iam that is not a loopback address (the development IAM listens on
                   loopback by default; tokens would otherwise cross a network in clear text)`;

const TIMEOUT_MS = 10_000;

export async function tokenCommand(args: string[]): Promise<number> {
  const { values } = parse(args, {
    iam: { type: 'string' }, actor: { type: 'string' }, tenant: { type: 'string' }, expiry: { type: 'string' }, 'allow-remote': { type: 'boolean' },
  });
  const iam = required(values.iam, 'iam');
  const actorId = required(values.actor, 'actor');
  const tenant = required(values.tenant, 'tenant');
  const expiry = values.expiry === undefined ? 3600 : Number(values.expiry);
  if (!/^\d+$/.test(values.expiry ?? '1') || !Number.isSafeInteger(expiry) || expiry < 1 || expiry > MAX_EXPIRY_SEC) {
    throw new UsageError(`--expiry must be a whole number of seconds from 1 to ${MAX_EXPIRY_SEC}`);
  }
  let base: URL;
  try {
    base = new URL(iam);
  } catch {
    throw new UsageError('--iam must be a URL such as http://localhost:4000');
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UsageError('--iam must be an http(s) URL');
  if (!isLoopbackHost(base.hostname) && (values['allow-remote'] as unknown) !== true) {
    throw new UsageError(`--iam ${visible(base.host)} is not a loopback address; the development IAM listens on loopback by default. Pass --allow-remote to mint from it anyway`);
  }
  const root = base.href.replace(/\/+$/, '');
  const where = `the development IAM at ${visible(base.origin)}`;

  const config = await call(where, 'reading its actors', `${root}/console/api/config`, { headers: { accept: 'application/json' } });
  if (config.status === 404) throw new Error(`${where} has no console API (GET /console/api/config answered 404): is it a development IAM, with its console on?`);
  if (config.status !== 200) throw new Error(`${where} answered ${config.status} to GET /console/api/config`);
  const { actors, idps } = (await config.json()) as DevIamConfig;
  const actor = actors.find((a) => a.id === actorId);
  if (!actor) throw new Error(`no actor "${visible(actorId)}" in ${where}; its actors: ${actors.map((a) => visible(a.id)).join(', ') || '(none)'}`);
  const idp = idps.find((i) => i.key === actor.idp);
  if (!idp || !('builtin' in idp)) throw new Error(`actor "${visible(actorId)}" signs in with IdP "${visible(actor.idp)}", not the built-in one: its IdP token cannot be minted here`);
  if (!Object.hasOwn(actor.tenants, tenant)) {
    throw new Error(`tenant "${visible(tenant)}" is not one of actor "${visible(actorId)}"'s tenants: ${Object.keys(actor.tenants).map(visible).join(', ') || '(none)'}`);
  }

  const idpAnswer = await call(where, 'getting an IdP token', `${root}/dev-idp/token`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ subject: actor.subject }),
  });
  if (idpAnswer.status !== 200) throw new Error(`${where} answered ${idpAnswer.status} to POST /dev-idp/token`);
  const idpToken = (await idpAnswer.text()).trim();

  const answer = await call(where, 'exchanging the IdP token', `${root}/authentication/v1/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${idpToken}`, 'idp-key': actor.idp, accept: 'application/jwt', 'content-type': 'application/json' },
    body: JSON.stringify({ tenantId: tenant, expiryInSecs: expiry, tokenFormat: 't1' }),
  });
  // The answer's body is not shown: on success it is the token, and it is printed only below.
  if (answer.status !== 200) throw new Error(`${where} refused the token exchange (${answer.status}) for actor "${visible(actorId)}" in tenant "${visible(tenant)}"`);
  const token = (await answer.text()).trim();
  if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) throw new Error(`${where} answered the token exchange with something that is not a JWT`);
  process.stdout.write(`${token}\n`);
  return 0;
}

async function call(where: string, step: string, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown } }).cause?.code ?? (error as { name?: unknown }).name;
    throw new Error(`cannot reach ${where} while ${step}${typeof cause === 'string' ? ` (${cause})` : ''}: is "iam-authz dev-server" running there?`);
  }
}
