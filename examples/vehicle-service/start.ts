/**
 * `npm start`: the development IAM and the vehicle-service on localhost, ready-to-paste curl
 * commands with fresh tokens, one run of the demo, then serving until Ctrl-C.
 * `npm run demo` (`--demo`): the same, exiting 0 only when every status matched.
 *
 * Options: see USAGE (`npm start -- --help`). The development IAM keeps its signing keys in
 * `.dev-keys.json` beside this file (git-ignored), so tokens and printed curl lines survive a restart.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createAuthorizer } from 'iam-authz';
import { startDevIam } from 'iam-authz-dev';
import { demoTokens, formatRows, runDemo } from './demo.js';
import { startExpress } from './express.js';
import { startFastify } from './fastify.js';
import { startKoa } from './koa.js';
import { startNest } from './nest.js';

const STARTERS = { express: startExpress, koa: startKoa, fastify: startFastify, nest: startNest } as const;

const USAGE = `npm start -- [options]     the development IAM and the vehicle-service on 127.0.0.1

  --framework express|koa|fastify|nest   the service's framework (default express)
  --port N                          the service's port (default 3000; 0 = any free port)
  --iam-port N                      the development IAM's port (default 4000; 0 = any free port)
  --demo                            run the demo once and exit: 0 when every status matched
  --fresh-keys                      new signing keys instead of those kept in .dev-keys.json
  -h, --help                        this text
`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        framework: { type: 'string', default: 'express' },
        port: { type: 'string', default: '3000' },
        'iam-port': { type: 'string', default: '4000' },
        demo: { type: 'boolean', default: false },
        'fresh-keys': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const framework = values.framework;
  if (!Object.hasOwn(STARTERS, framework)) {
    console.error(`unknown --framework "${framework}" (express, koa, fastify or nest)`);
    return 2;
  }
  // The demo (CI) starts clean; `npm start` keeps its keys so that printed tokens survive a restart.
  const keyFile = values.demo || values['fresh-keys'] ? undefined : fileURLToPath(new URL('./.dev-keys.json', import.meta.url));
  const iam = await startDevIam({ config: fileURLToPath(new URL('./iam.json', import.meta.url)), port: Number(values['iam-port']), ...(keyFile ? { keyFile } : {}) });
  const authorizer = createAuthorizer({ baseUrl: iam.baseUrl });
  const service = await STARTERS[framework as keyof typeof STARTERS](authorizer, Number(values.port));
  const stop = async () => {
    await service.close();
    await iam.close();
  };

  const tokens = await demoTokens(iam);
  if (!values.demo) {
    console.log(`development IAM   ${iam.baseUrl}  (issuer ${iam.issuer}; signing keys kept in ${keyFile ?? 'memory only'})`);
    console.log(`  console         ${iam.baseUrl}/console  (edit roles and actors, mint tokens, explain decisions; saved to iam.json)`);
    console.log(`  token endpoint  POST ${iam.issuer}/tokens  (spec §4.1: IdP token → IAM token)`);
    console.log(`  JWKS            GET  ${iam.issuer}/.well-known/jwks.json`);
    console.log(`  policy API      GET  ${iam.baseUrl}/policy/v1/roles  (spec §4.2)`);
    console.log(`  dev IdP         POST ${iam.baseUrl}/dev-idp/token  {"subject":"alice"} → an IdP token; its keys at GET ${iam.baseUrl}/dev-idp/.well-known/jwks.json`);
    console.log(`vehicle-service   ${service.url}  (${framework}): GET/PUT /vehicle/:vin\n`);
    console.log('Try it (tokens valid for one hour):\n');
    console.log(`  curl -i ${service.url}/vehicle/WVW1 -H "Authorization: Bearer ${tokens.alice}"\n`);
    console.log(`  curl -i -X PUT ${service.url}/vehicle/WVW1 -H "Authorization: Bearer ${tokens.bob}" -H 'content-type: application/json' -d '{"color":"red"}'\n`);
    console.log('Get a token yourself (built-in IdP, then the token exchange of spec §4.1):\n');
    console.log(`  IDP=$(curl -s -X POST ${iam.baseUrl}/dev-idp/token -H 'content-type: application/json' -d '{"subject":"alice"}')`);
    console.log(`  curl -s -X POST ${iam.baseUrl}/authentication/v1/tokens -H "authorization: Bearer $IDP" -H 'idp-key: dev' \\`);
    console.log(`    -H 'accept: application/jwt' -H 'content-type: application/json' -d '{"tenantId":"tenant-1","expiryInSecs":3600,"tokenFormat":"t1"}'\n`);
  }
  const rows = await runDemo(service.url, tokens);
  const ok = rows.every((r) => r.status === r.expected);
  console.log(formatRows(rows));
  console.log(ok ? '\nevery status matched' : '\nSOME STATUSES DID NOT MATCH');
  if (values.demo) {
    await stop();
    return ok ? 0 : 1;
  }
  console.log('\nserving; Ctrl-C to stop');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await stop();
  return 0;
}

main().then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    const code = (error as { code?: unknown } | null)?.code;
    const hint = code === 'EADDRINUSE' ? ' (choose other ports with --port N and --iam-port N)' : '';
    console.error(`${error instanceof Error ? error.message : String(error)}${hint}`);
    process.exitCode = 1;
  },
);
