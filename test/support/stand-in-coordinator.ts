/**
 * A stand-in coordinator for install.sh's tests (test/install-sh.test.ts): an HTTP server that
 * answers each GET by its path, the 503 a coordinator gives while it packs the node package, and
 * install.sh's arguments to install from it.
 */
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';

/** A stand-in coordinator on a free port: `handle` answers each GET by its path. */
export async function serve(handle: (url: string, res: ServerResponse) => void): Promise<Server> {
  const server = createServer((req, res) => handle(req.url ?? '/', res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

/** The coordinator's answer while it packs the node package (node-packages.ts). */
export function notReady(res: ServerResponse, retryAfterS: string): void {
  res.writeHead(503, { 'content-type': 'application/json', 'retry-after': retryAfterS });
  res.end(
    JSON.stringify({
      error: {
        message: 'The node package is being prepared; retry in a few seconds.',
        type: 'api_error',
        code: 'not_ready',
        param: null,
      },
    }),
  );
}

/** install.sh's arguments for a coordinator-package install from `server` into `where`. */
export function installArgsAgainst(server: Server, where: { prefix: string; state: string }): string[] {
  const { port } = server.address() as { port: number };
  const folders = ['--prefix', where.prefix, '--state-dir', where.state];
  return ['--role', 'cpu', '--coordinator', `http://127.0.0.1:${port}`, ...folders, '--no-service'];
}
