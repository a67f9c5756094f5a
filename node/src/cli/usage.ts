/**
 * The help text: each command's block of the usage, keyed by the name `gpumesh-node` dispatches on
 * (cli.ts maps the same names to their modules). `--help` prints the whole usage, `<command>
 * --help` that command's block (`models --help`: every models command); neither loads a command.
 */
export const COMMAND_HELP = {
  start: `  start     connect to the coordinator and serve inference (SIGTERM/SIGINT drain, then exit)
            (every other command takes --json: one JSON document on stdout)`,
  detect: `  detect    show this machine's hardware (--json: the manifest's hardware part)`,
  id: `  id        print the node id (the node key's address) and the text an owner wallet signs`,
  link: `  link --owner 0x…
            the node key's consent to that wallet claiming this node from the dashboard
            (paste the signature there: POST /api/provider/nodes/link)`,
  doctor: `  doctor    check coordinator, models, runtime, GPU backend and clock; each failure with a fix`,
  status: `  status    the running node's state from its health endpoint (--json): connection, presence,
            jobs, tokens served, estimated earnings; exit 1 when it is not running or not online`,
  models: `  models    list local GGUF models and how they will be offered, with prices`,
  'models info': `  models info <file>    architecture, quantisation, parameters, context, memory on GPU/CPU, fit`,
  'models rm': `  models rm <file>      remove a model file from the models folder`,
  'models recommend': `  models recommend      the coordinator's catalog models that fit this machine`,
  'models pull': `  models pull <ref> [--sha256 HEX]
            download a GGUF (hf:<user>/<repo>/<file>.gguf, hf:<user>/<repo>:<quant>, https://…)
            into the models folder, resuming a partial download; checked against the
            coordinator's catalog (or --sha256) and removed on a mismatch`,
} as const;

/** A command's name as `gpumesh-node` dispatches on it (`models pull` for `models pull <ref>`). */
export type CommandName = keyof typeof COMMAND_HELP;

const SETTINGS = `Settings (flags > GPUMESH_* environment > --config file > defaults):
  --coordinator URL  --role gpu|cpu|network  --state-dir DIR  --models-dir DIR  --config FILE
  --runtime llama|openai  --openai-url URL  --gpu auto|cpu  --gpu-layers auto|max|N  --gpus 0,1
  --threads N  --max-concurrency N
  --offer-embeddings  --health-port N  --owner-address 0x…  --owner-signature 0x…`;

/** The whole usage text, as `gpumesh-node --help` prints it. */
export const USAGE = `Usage: gpumesh-node <command> [flags]
       gpumesh-node --version

Commands:
${Object.values(COMMAND_HELP).join('\n')}

${SETTINGS}`;

/** One command's usage (for `models`, every models command's), as `<command> --help` prints it. */
export function commandUsage(name: CommandName): string {
  const blocks = Object.entries(COMMAND_HELP)
    .filter(([other]) => other === name || (name === 'models' && other.startsWith('models ')))
    .map(([, block]) => block);
  return `Usage: gpumesh-node ${name} [flags]\n\n${blocks.join('\n')}\n\n${SETTINGS}`;
}
