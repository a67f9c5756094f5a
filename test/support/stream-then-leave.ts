/**
 * A client that starts a streamed chat completion and leaves mid-stream: POSTs `body` with
 * `stream: true`, reads until `chunks` chunk events arrived, then aborts the request.
 */
export async function streamThenLeave(
  url: string,
  key: string,
  body: Record<string, unknown>,
  chunks: number,
): Promise<void> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
    signal: controller.signal,
  });
  if (res.status !== 200) throw new Error(`expected a stream, got ${res.status}: ${await res.text()}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while ((text.match(/chat\.completion\.chunk/g) ?? []).length < chunks) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended early: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
}
