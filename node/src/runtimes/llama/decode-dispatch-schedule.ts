/**
 * When node-llama-cpp sends the decode a job queued: at once while one job runs on the context
 * (there is nothing to batch it with), else on the next macrotask, so that concurrent jobs' tokens
 * share one batched decode. node-llama-cpp's own schedule sends at once only when all of the
 * context's sequences have queued, in use or not, so with the default 2 a lone job's every token
 * waited a macrotask: ~25 µs a token on this 2-core machine at load ~3.5 (tiny bench model 256 vs 232 µs a token
 * with one sequence; medium 1,774 vs 1,748), and behind any macrotask queued before it, such as
 * the chunk frame the token loop had just made due. Sent at once: 235 and 1,737 µs.
 */
export function decodeDispatchSchedule(inUse: () => number): (dispatch: () => void) => void {
  return (dispatch) => {
    if (inUse() <= 1) dispatch();
    else setImmediate(dispatch);
  };
}
