#!/usr/bin/env node
/**
 * The `iam-authz` command: `dev-server`, `token`, `decode`, `explain` and `check`. Each subcommand lives in its own
 * module; this file only dispatches and maps failures to exit codes.
 */
import { checkCommand, CHECK_HELP } from './check.js';
import { decodeCommand, DECODE_HELP } from './decode.js';
import { devServerCommand, DEV_SERVER_HELP } from './dev-server.js';
import { inspect } from 'node:util';
import { explainCommand, EXPLAIN_HELP } from './explain.js';
import { escapeUnsafe, visible } from './terminal.js';
import { tokenCommand, TOKEN_HELP } from './token.js';
import { UsageError } from './usage.js';
import { packageVersion } from './version.js';

const HELP = `usage: iam-authz <command> [options]

commands:
  dev-server   run the development IAM (token endpoint, JWKS, policy API) on localhost
  token        mint a token for an actor from a running development IAM and print it
  decode       print a token's header, claims and access references (offline, NOT verified)
  explain      verify a token, fetch the policy and explain the permission decision
  check        fail when a permission the service's guards ask for is granted by no role (for CI)

Run "iam-authz <command> --help" for a command's options; "iam-authz --version" prints the version.`;

const COMMANDS: Record<string, { run: (args: string[]) => Promise<number>; help: string }> = {
  check: { run: checkCommand, help: CHECK_HELP },
  'dev-server': { run: devServerCommand, help: DEV_SERVER_HELP },
  decode: { run: decodeCommand, help: DECODE_HELP },
  explain: { run: explainCommand, help: EXPLAIN_HELP },
  token: { run: tokenCommand, help: TOKEN_HELP },
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v') {
    console.log(packageVersion());
    return 0;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(HELP);
    return name === undefined ? 2 : 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    console.error(`iam-authz: unknown command "${visible(name)}"\n\n${HELP}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.help);
    return 0;
  }
  // Messages may quote arguments or token text: no control character reaches the terminal raw.
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`iam-authz ${name}: ${escapeUnsafe(error.message)}\n\n${command.help}`);
      return 2;
    }
    console.error(`iam-authz ${name}: ${escapeUnsafe(error instanceof Error ? error.message : String(error))}`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    console.error(inspect(error).split('\n').map(escapeUnsafe).join('\n'));
    process.exitCode = 1;
  },
);
