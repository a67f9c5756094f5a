import { createServer } from 'node:net';

/**
 * A TCP port free on 127.0.0.1 right now, for an app whose public URL must be configured before it
 * listens (the pages print it). The OS does not hand the same port out again at once.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}
