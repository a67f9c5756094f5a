import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

/** Sockets corked until the end of this turn of the event loop. */
const corked = new WeakSet<Socket>();

/**
 * Sends a message on an open ws WebSocket, writing every message sent in this turn of the event
 * loop in one system call: the first send corks the TCP socket and a setImmediate uncorks it, after
 * the other I/O callbacks of the turn have sent theirs. Under load a relay sends several frames per
 * turn (a batch of jobs, their results), and each separate write costs a syscall and a wake-up of
 * the peer; alone, a frame waits only for the end of the current turn.
 */
export function sendCoalesced(ws: WebSocket, data: string | Buffer): void {
  // ws keeps its TCP socket in `_socket` (not in its types): the only handle on cork/uncork.
  const socket = (ws as unknown as { _socket?: Socket })._socket;
  if (socket && !corked.has(socket)) {
    corked.add(socket);
    socket.cork();
    setImmediate(() => {
      corked.delete(socket);
      socket.uncork();
    });
  }
  ws.send(data);
}
