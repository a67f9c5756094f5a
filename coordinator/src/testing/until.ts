/**
 * Waits until `condition` holds, checking every `intervalMs`; throws once `timeoutMs` passed
 * without it. For tests waiting on something another process or socket does: the outcome is the
 * condition, never the time waited.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  intervalMs = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${condition}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
