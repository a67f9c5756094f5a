import type { FastifyInstance } from 'fastify';

/**
 * Runs `task` every `intervalMs` while the app is up, from its onReady (never two at once);
 * failures are logged as `<what> failed`. Closing the app stops the timer and awaits a run in flight.
 */
export function repeat(
  app: FastifyInstance,
  intervalMs: number,
  what: string,
  task: () => Promise<unknown>,
): void {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  app.addHook('onReady', async () => {
    timer = setInterval(() => {
      if (running) return;
      running = task()
        .catch((error: unknown) => app.log.warn({ err: error }, `${what} failed`))
        .finally(() => {
          running = undefined;
        });
    }, intervalMs);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}
