/**
 * The node hub and the router, as an app-level plugin: nodes connect on the HTTP server's
 * WebSocket upgrade (HUB_PATHS), the hub keeps the pick index in step with them, and the router
 * (router/router.ts) sends jobs to local nodes through the hub — and to other replicas' nodes
 * through the peer transport, once peer-plugin.ts sets it. The composition root
 * (compose/start-hub.ts) builds both, with what they are told about nodes; this plugin serves them.
 */
import { frameJsonSchema } from '@gpumesh/protocol';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { WebSocketServer } from 'ws';
import type { Router } from '../router/router.js';
import type { Hub } from './hub.js';

/** Where nodes connect: ws(s)://<coordinator>/node (the node daemon's default hub path). */
export const HUB_PATH = '/node';
/**
 * Where the coordinator serves the protocol's frame JSON Schemas (protocol/schema/frames.schema.json),
 * for node implementers in other languages; the path follows the schema's `$id`.
 */
export const FRAME_SCHEMA_PATH = '/schema/v0/frames.schema.json';
/** How long a stopping coordinator waits for its nodes to answer its 1000 close before dropping them. */
export const SHUTDOWN_CLOSE_GRACE_MS = 1_000;
/** Every path the hub answers on: /node (NODE_PROTOCOL.md §2), and /v0/nodes, the path v0's examples used. */
export const HUB_PATHS: readonly string[] = [HUB_PATH, '/v0/nodes'];

declare module 'fastify' {
  interface FastifyInstance {
    /** The node hub (live nodes, the pick index). */
    hub: Hub;
    /** Picks' destination: sends jobs to nodes, here or on another replica, and counts their slots. */
    router: Router;
  }
}

export type HubPluginOptions = {
  hub: Hub;
  /** The router sending jobs through `hub` (its wait queue closes with the app). */
  router: Router;
  /** The largest frame a node may send (router.maxFrameBytes). */
  maxFrameBytes: number;
};

async function hub(app: FastifyInstance, options: HubPluginOptions): Promise<void> {
  const { hub: nodes, router, maxFrameBytes } = options;
  app.decorate('hub', nodes);
  app.decorate('router', router);
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxFrameBytes + 1024 });
  wss.on('connection', (socket) => nodes.accept(socket));
  app.server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    if (!HUB_PATHS.includes(path ?? '')) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  const frameSchema = JSON.stringify(frameJsonSchema());
  app.get(FRAME_SCHEMA_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/schema+json; charset=utf-8').send(frameSchema),
  );
  app.addHook('onReady', async () => {
    nodes.start();
  });
  app.addHook('preClose', async () => {
    // Each session was sent bye and a 1000 close (NODE_PROTOCOL.md §8); give the closing handshakes
    // a moment, so a node sees 1000 rather than a dropped socket (1006), then drop what is left.
    nodes.close();
    router.queue.close();
    await Promise.all(
      [...wss.clients].map(
        (ws) =>
          new Promise<void>((resolve) => {
            if (ws.readyState === ws.CLOSED) return resolve();
            const timer = setTimeout(() => {
              ws.terminate();
              resolve();
            }, SHUTDOWN_CLOSE_GRACE_MS);
            ws.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
          }),
      ),
    );
    wss.close();
  });
}

/** The hub and router as an app-level plugin (its `hub` and `router` decorations are the whole app's). */
export const hubPlugin = fp(hub, { name: 'gpumesh-hub' });
