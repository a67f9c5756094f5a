import { parseArgs } from 'node:util';
import type { NodeConfig } from '../config.js';
import { CONFIG_FLAGS } from '../config-flags.js';

/**
 * The command line, parsed once for every command: the settings' flags (config-flags.ts), the
 * flags some commands read, and the positionals (the command's name, then its arguments).
 * @throws TypeError (parseArgs's) on an unknown flag or a flag missing its value.
 */
export function parseCliArgs(argv: string[]) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...CONFIG_FLAGS,
      config: { type: 'string' },
      json: { type: 'boolean' },
      sha256: { type: 'string' },
      owner: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
  });
  return { command: positionals[0], args: positionals.slice(1), values };
}

export type CliValues = ReturnType<typeof parseCliArgs>['values'];

/** What a command gets besides the configuration: the positionals after its name, and the flags. */
export type CommandInput = { args: string[]; values: CliValues };

/** A subcommand (one per file in cli/); resolves to the process exit code. */
export type Command = (config: NodeConfig, input: CommandInput) => Promise<number>;
