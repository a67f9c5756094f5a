/**
 * The coordinator's only entry point that touches the process: reads flags and environment,
 * opens and migrates the store, listens, and on SIGINT/SIGTERM closes gracefully then exits
 * 130/143 (128 + signal number, as shells report it).
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { type CoordinatorConfig, loadConfig } from './config.js';
import { migrate } from './db/migrate.js';
import { openStore } from './db/store.js';
import { reconcileCommand } from './reconcile/reconcile-command.js';
import { reinstateCommand } from './trust/standing/reinstate-command.js';
import { asksForHelp, USAGE } from './usage.js';

export const EXIT_SIGINT = 130;
export const EXIT_SIGTERM = 143;

export type RunningServer = {
  app: FastifyInstance;
  config: CoordinatorConfig;
  url: string;
  close(): Promise<void>;
};

/** Starts a coordinator; resolves once it listens. */
export async function startServer(options: {
  argv?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  /** Values set in code (the local-network launcher); they win over flags and environment. */
  overrides?: Record<string, unknown>;
}): Promise<RunningServer> {
  const config = loadConfig({
    argv: options.argv ?? [],
    env: options.env ?? {},
    overrides: options.overrides,
  });
  const store = openStore(config);
  await migrate(store.db);
  const app = await buildApp({ config, store });
  const url = await app.listen({ host: config.host, port: config.port });
  const close = async () => {
    await app.close();
    await store.close();
  };
  return { app, config, url, close };
}

/** The CLI: start, log the URL, trap signals; or a command (reconcile, reinstate, --help). */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  // Before any command runs: `reconcile --help` must not open (and create) a store.
  if (asksForHelp(argv)) {
    process.stdout.write(USAGE);
    return;
  }
  if (argv[0] === 'reconcile') {
    process.exitCode = await reconcileCommand(argv.slice(1), env, (line) =>
      process.stdout.write(`${line}\n`),
    );
    return;
  }
  if (argv[0] === 'reinstate') {
    process.exitCode = await reinstateCommand(argv.slice(1), env, {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
    });
    return;
  }
  const server = await startServer({ argv, env });
  server.app.log.info(
    { url: server.url, publicUrl: server.config.publicUrl },
    'gpumesh coordinator listening',
  );
  const stop = (code: number) => () => {
    // Should the loop empty before close() resolves, the process still exits with the signal's code.
    process.exitCode = code;
    server.close().then(
      () => process.exit(code),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop(EXIT_SIGINT));
  process.once('SIGTERM', stop(EXIT_SIGTERM));
}
