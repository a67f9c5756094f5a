/**
 * Reads a server-sent-events response to its end, as it arrives: the data of each event (its
 * `data:` lines joined; `[DONE]` as it came), in order, each passed to `onData` as soon as read.
 */
export async function readSseData(
  res: Response,
  onData: (data: string) => void = () => {},
): Promise<string[]> {
  const data: string[] = [];
  let buffer = '';
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    buffer += decoder.decode(read.value, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const event = buffer
        .slice(0, end)
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      if (!event) continue;
      data.push(event);
      onData(event);
    }
  }
  return data;
}
