/** Argument parsing shared by the subcommands: `node:util` parseArgs with usage errors. */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Wrong arguments: the command prints its help and exits with 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

export function parse(args: string[], options: Options, allowPositionals = false): { values: Record<string, string | undefined>; positionals: string[] } {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true }) as { values: Record<string, string | undefined>; positionals: string[] };
  } catch (error) {
    // Node quotes the stray argument, which may be a token put in the wrong place: not echoed.
    if ((error as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw new UsageError('unexpected argument (not shown: it may be a token); this command takes only options');
    }
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export function required(value: string | undefined, name: string): string {
  if (value === undefined || value.length === 0) throw new UsageError(`--${name} is required`);
  return value;
}
