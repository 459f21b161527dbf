/** Argument parsing shared by the subcommands: `node:util` parseArgs with usage errors. */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Wrong arguments: the command prints its help and exits with 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

export function parse(args: string[], options: Options, allowPositionals = false): { values: Record<string, string | undefined>; positionals: string[] } {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true }) as { values: Record<string, string | undefined>; positionals: string[] };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export function required(value: string | undefined, name: string): string {
  if (value === undefined || value.length === 0) throw new UsageError(`--${name} is required`);
  return value;
}
