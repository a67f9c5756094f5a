/**
 * What bench/network-sim.ts asks a replica process (replica-process.ts) over its IPC channel, of
 * figures only the process itself can see: the pick timed over its live index (the nodes really
 * connected, as bench/router-pick.ts times it over made-up ones) and its heap after a full GC.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import type { FastifyInstance } from 'fastify';

export type ProbeRequest =
  | { cmd: 'pick'; models: string[]; picks: number }
  | { cmd: 'memory' }
  | { cmd: 'profile'; file: string | null };

export type PickProbe = {
  cmd: 'pick';
  /** Mean µs per pick (3 candidates) with its acquire and release, as router-pick times it. */
  usPerPick: number;
  picks: number;
  /** Picks that found no candidate. */
  empty: number;
  nodes: number;
};

export type MemoryProbe = {
  cmd: 'memory';
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  gc: boolean;
  sessions: number;
};

/** Answers probes on `process` messages until the process exits. */
export function answerProbes(app: FastifyInstance): void {
  let profiler: Session | undefined;
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      profiler!.post(method, (error, result) => (error ? reject(error) : resolve(result))),
    );
  process.on('message', async (message: ProbeRequest) => {
    if (message.cmd === 'profile') {
      // {file: null} starts a CPU profile of the main thread; {file} writes it there and stops.
      if (message.file === null) {
        profiler = new Session();
        profiler.connect();
        await post('Profiler.enable');
        await post('Profiler.start');
      } else if (profiler) {
        const { profile } = (await post('Profiler.stop')) as { profile: unknown };
        writeFileSync(message.file, JSON.stringify(profile));
        profiler.disconnect();
        profiler = undefined;
      }
      process.send!({ cmd: 'profile' });
    }
    if (message.cmd === 'pick') process.send!(timePicks(app, message.models, message.picks));
    if (message.cmd === 'memory') {
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      const m = process.memoryUsage();
      process.send!({
        cmd: 'memory',
        rss: m.rss,
        heapUsed: m.heapUsed,
        external: m.external,
        arrayBuffers: m.arrayBuffers,
        gc: gc !== undefined,
        sessions: app.hub.size,
      } satisfies MemoryProbe);
    }
  });
}

/** `picks` picks over the models in turn, each slot taken and given back at once (the heap reorders twice). */
function timePicks(app: FastifyInstance, models: string[], picks: number): PickProbe {
  const index = app.hub.index;
  let empty = 0;
  const run = (n: number) => {
    for (let i = 0; i < n; i++) {
      const result = index.pick({ modelId: models[i % models.length]!, scope: 'infer.chat', limit: 3 });
      if (!result.ok) {
        empty++;
        continue;
      }
      const chosen = result.candidates[0]!;
      index.acquire(chosen);
      index.release(chosen);
    }
  };
  run(Math.min(2_000, picks)); // warm-up
  empty = 0;
  const start = process.hrtime.bigint();
  run(picks);
  const us = Number(process.hrtime.bigint() - start) / 1000 / picks;
  return { cmd: 'pick', usPerPick: us, picks, empty, nodes: [...index.nodes()].length };
}
