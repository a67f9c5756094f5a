/**
 * The far end of gateway-load's bare relay, in a process of its own as a node is: a WebSocket
 * client that answers every message at once with a fixed chat completion carrying the message's
 * id — no protocol, no validation: the least a relay's peer can do.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/bare-relay-peer.ts <ws-url>   (prints "ready" once connected)
 */
import { sendCoalesced } from '@gpumesh/protocol/internal';
import { WebSocket } from 'ws';

const [url] = process.argv.slice(2);
if (!url) {
  console.error('usage: bare-relay-peer.ts <ws-url>');
  process.exit(2);
}
const ws = new WebSocket(url);
ws.on('open', () => console.log('ready'));
ws.on('message', (data) => {
  const { id } = JSON.parse(data.toString()) as { id: number };
  sendCoalesced(
    ws,
    JSON.stringify({
      id,
      response: {
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      },
    }),
  );
});
ws.on('close', () => process.exit(0));
process.on('SIGTERM', () => ws.close());
