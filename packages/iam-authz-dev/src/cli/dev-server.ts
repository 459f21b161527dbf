/** `iam-authz dev-server`: the development IAM from a config file, reloaded when the file changes. */
import type { DevIamConfig } from '../config.js';
import { loadDevIamConfig } from '../dev-iam-core.js';
import { startDevIam } from '../dev-iam.js';
import { escapeUnsafe } from './terminal.js';
import { parse, required, UsageError } from './usage.js';
import { watchFile } from './watch-file.js';

export const DEV_SERVER_HELP = `usage: iam-authz dev-server --config FILE [--port N] [--host H] [--key-file FILE] [--console]

Runs the development IAM on localhost: POST /authentication/v1/tokens, the JWKS at
/authentication/v1/.well-known/jwks.json, GET /policy/v1/roles, the web console at /console and,
with a "builtin" IdP entry, POST /dev-idp/token. The config file is reloaded when it changes; a bad
file is reported with the path of the bad field and the previous config stays in force. Every
endpoint answers only to the Host names of the listening address (localhost, 127.0.0.1, [::1], the
address itself; off loopback also IP addresses), against DNS rebinding. Not for production.

options:
  --config FILE    JSON config: { "idps": [...], "applications": [...], "actors": [...] }
  --port N         TCP port (default 4000; 0 picks a free one)
  --host H         interface (default 127.0.0.1). On an address that is not loopback (0.0.0.0) the
                   console is OFF unless --console is given: it can change the config, including
                   JWKS URLs the IAM then fetches; the token, JWKS and policy endpoints still serve
  --key-file FILE  keep the signing keys in FILE (created with mode 0600) so tokens survive a
                   restart; refused if it is a symlink, another user's, or open to group/others
                   (as ssh requires of keys: 0600 or 0400)
  --console        serve the console even on a non-loopback --host`;

export async function devServerCommand(args: string[]): Promise<number> {
  const { values } = parse(args, {
    config: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'key-file': { type: 'string' }, console: { type: 'boolean' },
  });
  const file = required(values.config, 'config');
  const port = Number(values.port ?? '4000');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError('--port must be a TCP port number');
  const keyFile = values['key-file'];
  if (keyFile === '') throw new UsageError('--key-file needs a file name');
  // A boolean flag: present or not (the shared parser types every value as a string).
  const withConsole = (values.console as unknown) === true;
  const iam = await startDevIam({
    config: file, port, ...(values.host ? { host: values.host } : {}), ...(keyFile === undefined ? {} : { keyFile }), ...(withConsole ? { console: true } : {}),
  });
  console.log(`development IAM on ${iam.baseUrl}`);
  console.log(`  issuer       ${iam.issuer}`);
  console.log(`  token        POST ${iam.issuer}/tokens`);
  console.log(`  jwks         ${iam.issuer}/.well-known/jwks.json`);
  console.log(`  policy       ${iam.baseUrl}/policy/v1/roles`);
  console.log(`  console      ${iam.consoleUrl ?? 'off (not on loopback; --console turns it on)'}`);
  for (const line of firstHourLines(iam.baseUrl, loadDevIamConfig(file))) console.log(line);
  console.log(`watching ${file}; Ctrl-C to stop`);

  // Editors and the console save by renaming a new file over the config: watched through its directory.
  const watcher = watchFile(file, () => {
    try {
      iam.setConfig(file);
      console.log(`${new Date().toISOString()} config reloaded`);
    } catch (error) {
      console.error(`config not reloaded: ${error instanceof Error ? error.message : String(error)}`);
    }
  }, (error) => {
    console.error(`stopped watching ${file}: ${error.message}`);
  });
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  watcher.close();
  await iam.close();
  return 0;
}

/** The built-in IdP's endpoint and, for the first actor signing in with it, a token line and a ready-made curl line. */
function firstHourLines(baseUrl: string, config: DevIamConfig): string[] {
  const builtin = config.idps.find((i) => 'builtin' in i);
  if (!builtin) return ['  dev IdP      off (add { "key": "dev", "builtin": true } to "idps" for POST /dev-idp/token)'];
  const lines = [`  dev IdP      POST ${baseUrl}/dev-idp/token  {"subject": "..."}  (IdP key "${builtin.key}")`];
  const actor = config.actors.find((a) => a.idp === builtin.key);
  const tenant = actor && Object.keys(actor.tenants)[0];
  if (!actor || tenant === undefined) return lines;
  // Shell-quoted: ids come from the config file and may hold any character.
  const q = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
  lines.push(...[
    `  try          TOKEN=$(npx iam-authz token --iam ${baseUrl} --actor ${q(actor.id)} --tenant ${q(tenant)})`,
    `               curl -H "Authorization: Bearer $TOKEN" ${baseUrl}/policy/v1/roles`,
  ].map(escapeUnsafe));
  return lines;
}
