import type { NodeConfig } from '../config.js';
import type { HubLogger } from '../hub-client-options.js';
import type { CommandInput } from './parse-args.js';

/** Exit codes after a signal: 128 + its number, as shells report it. */
const EXIT_AFTER = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * `gpumesh-node start`: serves until SIGINT or SIGTERM (drains, then exits 130 or 143), or until the
 * coordinator refuses the node for good (exit 1); exit 3 when there is no model to serve.
 */
export async function start(config: NodeConfig, _input: CommandInput): Promise<number> {
  if (config.runtime === 'llama') {
    // A node with nothing to serve would sit idle, earning nothing: say so and stop.
    const { listLocalModels } = await import('../runtimes/local-models.js');
    if ((await listLocalModels(config)).length === 0) {
      console.error(
        `gpumesh-node: no model to serve: no .gguf file in ${config.modelsDir}. Get one with\n` +
          '  gpumesh-node models pull hf:<user>/<repo>/<file>.gguf\n(or set --models-dir).',
      );
      return 3;
    }
  }
  const { startDaemon } = await import('../daemon.js');
  const log = logger();
  let lastShown = '';
  const daemon = await startDaemon(config, {
    log,
    onLoadProgress: ({ model, loaded, total, fraction }) => {
      const shown = `loading ${model} (${loaded + 1}/${total}) ${Math.floor(fraction * 100)}%`;
      if (shown !== lastShown) process.stderr.write(`${shown}\n`);
      lastShown = shown;
    },
  });
  log.info('node started', {
    nodeId: daemon.nodeId,
    health: daemon.health.url,
    models: daemon.runtime.models(),
  });
  const signal = await new Promise<keyof typeof EXIT_AFTER | { refused: string }>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
    void daemon.refused.then((reason) => resolve({ refused: reason }));
  });
  if (typeof signal === 'object') {
    // Retrying can't help: a wrong owner address or signature (see `gpumesh-node id`).
    console.error(`gpumesh-node: auth_failed: the coordinator refused this node: ${signal.refused}`);
    await daemon.shutdown('refused');
    return 1;
  }
  log.info('draining before exit', { signal, inFlight: daemon.hub.inFlight });
  await daemon.shutdown(signal);
  log.info('node stopped', { signal });
  return EXIT_AFTER[signal];
}

/** One JSON line per event on stderr (stdout stays free for a command's output). */
function logger(): HubLogger {
  const line = (level: string, message: string, fields?: object) =>
    console.error(JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields }));
  return { info: (m, f) => line('info', m, f), warn: (m, f) => line('warn', m, f) };
}
