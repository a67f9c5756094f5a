import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { rollUsage } from './roll-usage.js';

/** How often a replica folds the new usage rows into the rollups. */
export const ROLL_INTERVAL_MS = 10_000;

/**
 * Keeps the usage rollups current (roll-usage.ts), off the paid path: folds at start — a backlog
 * (the history before migration 021) in batches, each its own transaction, in the background —
 * then every ROLL_INTERVAL_MS. Every replica runs it; the roll's lock makes them take turns, and
 * a fold is never counted twice. Readers are exact whatever the rollups' lag (they read the rows
 * past the cursor raw), so a slow or failed roll only makes them read more rows.
 */
export function keepUsageRolled(
  app: FastifyInstance,
  ctx: Pick<AppContext, 'db' | 'clock'>,
  options: { intervalMs?: number } = {},
): void {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closing = false;
  const roll = () => {
    running ??= (async () => {
      try {
        while (!closing && !(await rollUsage(ctx.db, { now: ctx.clock.now() })).caughtUp) {}
      } catch (error) {
        if (!closing) app.log.error({ err: error }, 'rolling up usage failed');
      } finally {
        running = undefined;
      }
    })();
  };
  app.addHook('onReady', async () => {
    roll();
    timer = setInterval(roll, options.intervalMs ?? ROLL_INTERVAL_MS).unref();
  });
  app.addHook('preClose', async () => {
    closing = true;
    clearInterval(timer);
    await running;
  });
}
