/**
 * The gpumesh-node command: parses the command line, then imports the one command it names
 * (cli/<command>.ts), which imports its own modules (the daemon, node-llama-cpp, systeminformation,
 * viem). `--help`, `<command> --help` and `--version` import no command and no dependency, so they
 * start fast (cli-help.test.ts checks what they load).
 */

import { type Command, parseCliArgs } from './cli/parse-args.js';
import { COMMAND_HELP, type CommandName, commandUsage, USAGE } from './cli/usage.js';
import { NodeError } from './errors.js';

/** Each command's module, imported only when it runs. */
const COMMANDS: Record<CommandName, () => Promise<Command>> = {
  start: async () => (await import('./cli/start.js')).start,
  detect: async () => (await import('./cli/detect.js')).detect,
  id: async () => (await import('./cli/id.js')).id,
  link: async () => (await import('./cli/link.js')).link,
  doctor: async () => (await import('./cli/doctor.js')).doctor,
  status: async () => (await import('./cli/status.js')).status,
  models: async () => (await import('./cli/models-list.js')).modelsList,
  'models info': async () => (await import('./cli/models-info.js')).modelsInfo,
  'models rm': async () => (await import('./cli/models-rm.js')).modelsRm,
  'models recommend': async () => (await import('./cli/models-recommend.js')).modelsRecommend,
  'models pull': async () => (await import('./cli/models-pull.js')).modelsPull,
};

/** Runs one CLI command; resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseCliArgs>;
  try {
    parsed = parseCliArgs(argv);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { command, args, values } = parsed;
  if (values.version) {
    const { SOFTWARE } = await import('./software.js');
    console.log(SOFTWARE.version);
    return 0;
  }
  if (!command) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const found = findCommand(command, args);
  if (values.help) {
    console.log(found ? commandUsage(found.name) : USAGE);
    return 0;
  }
  if (!found) {
    const what = command === 'models' ? `models command ${args[0]}` : `command ${command}`;
    console.error(`Unknown ${what}.\n\n${USAGE}`);
    return 2;
  }
  try {
    const { loadConfig } = await import('./config.js');
    const config = loadConfig({ flags: values as Record<string, string | boolean | undefined> });
    const run = await COMMANDS[found.name]();
    return await run(config, { args: found.args, values });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      console.error(
        'gpumesh-node: the health port is taken (is another gpumesh-node running?); pass --health-port N (0: any free port).',
      );
      return 1;
    }
    const code = error instanceof NodeError ? error.code : 'internal_error';
    console.error(`gpumesh-node: ${code}: ${(error as Error).message}`);
    return 1;
  }
}

/**
 * The command the positionals name, and its own arguments: `models` alone or `models list` lists,
 * `models <sub>` is that models command. Undefined for a name no command has.
 */
function findCommand(command: string, args: string[]): { name: CommandName; args: string[] } | undefined {
  if (command === 'models') {
    const sub = args[0];
    if (sub === undefined || sub === 'list') return { name: 'models', args: args.slice(1) };
    const name = `models ${sub}`;
    return isCommandName(name) ? { name, args: args.slice(1) } : undefined;
  }
  // A name with a space is a models command's key, not something a user types as one word.
  return isCommandName(command) && !command.includes(' ') ? { name: command, args } : undefined;
}

function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMAND_HELP, name);
}
