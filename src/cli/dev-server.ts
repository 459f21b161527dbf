/** `iam-authz dev-server`: the development IAM from a config file, reloaded when the file changes. */
import { watch } from 'node:fs';
import { startDevIam } from '../testing/dev-iam.js';
import { parse, required, UsageError } from './usage.js';

export const DEV_SERVER_HELP = `usage: iam-authz dev-server --config FILE [--port N] [--host H]

Runs the development IAM on localhost: POST /authentication/v1/tokens, the JWKS at
/authentication/v1/.well-known/jwks.json, GET /policy/v1/roles and, with a "builtin" IdP entry,
POST /dev-idp/token. The config file is reloaded when it changes; a bad file is reported with the
path of the bad field and the previous config stays in force. Not for production.

options:
  --config FILE   JSON config: { "idps": [...], "applications": [...], "actors": [...] }
  --port N        TCP port (default 4000; 0 picks a free one)
  --host H        interface (default 127.0.0.1)`;

export async function devServerCommand(args: string[]): Promise<number> {
  const { values } = parse(args, { config: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' } });
  const file = required(values.config, 'config');
  const port = Number(values.port ?? '4000');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError('--port must be a TCP port number');
  const iam = await startDevIam({ config: file, port, ...(values.host ? { host: values.host } : {}) });
  console.log(`development IAM on ${iam.baseUrl}`);
  console.log(`  issuer       ${iam.issuer}`);
  console.log(`  token        POST ${iam.issuer}/tokens`);
  console.log(`  jwks         ${iam.issuer}/.well-known/jwks.json`);
  console.log(`  policy       ${iam.baseUrl}/policy/v1/roles`);
  console.log(`watching ${file}; Ctrl-C to stop`);

  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(file, () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      try {
        iam.setConfig(file);
        console.log(`${new Date().toISOString()} config reloaded`);
      } catch (error) {
        console.error(`config not reloaded: ${error instanceof Error ? error.message : String(error)}`);
      }
    }, 100);
  });
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  watcher.close();
  clearTimeout(timer);
  await iam.close();
  return 0;
}
