/**
 * `compute`, run at most once per `maxAgeMs`: its result is reused until `maxAgeMs` after the run
 * that made it began (so what is served is never older than that), and callers arriving while a
 * run is under way share it. A failed run is not kept: the next caller runs again. For views of the
 * whole network (pages-routes.ts: /network and /api/network/stats), whose cost grows with the node
 * list and whose answers already say they may be reused for as long (Cache-Control max-age).
 */
export function reuseFor<T>(
  compute: () => Promise<T>,
  maxAgeMs: number,
  now: () => number = () => performance.now(),
): () => Promise<T> {
  let last: { value: T; startedAt: number } | undefined;
  let running: Promise<T> | undefined;
  return () => {
    if (last && now() - last.startedAt < maxAgeMs) return Promise.resolve(last.value);
    if (running) return running;
    const startedAt = now();
    running = compute().then(
      (value) => {
        last = { value, startedAt };
        running = undefined;
        return value;
      },
      (error: unknown) => {
        running = undefined;
        throw error;
      },
    );
    return running;
  };
}
