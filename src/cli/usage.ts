/** Argument parsing shared by the subcommands: `node:util` parseArgs with usage errors. */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Wrong arguments: the command prints its help and exits with 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

export function parse<T extends Options>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export function required(value: string | undefined, name: string): string {
  if (value === undefined || value.length === 0) throw new UsageError(`--${name} is required`);
  return value;
}
