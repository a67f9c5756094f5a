/**
 * A fixed-reply node in its own process, as a real node is: the gateway benchmark runs it apart
 * from the coordinator so the two do not share an event loop.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/fixed-reply-node-process.ts <ws-url> <owner-private-key> <model>
 * Prints "ready" once the coordinator acknowledged its manifest; SIGTERM stops it gracefully.
 */

import { startFixedReplyNode, usdOffer } from '@gpumesh/node/testing';
import type { Hex } from 'viem';

const [url, owner, model = 'bench'] = process.argv.slice(2);
if (!url || !owner) {
  console.error('usage: fixed-reply-node-process.ts <ws-url> <owner-private-key> [model]');
  process.exit(2);
}
const USD = 1_000_000_000n;
const node = startFixedReplyNode({
  url,
  ownerPrivateKey: owner as Hex,
  models: [usdOffer(model, USD, 2n * USD)],
  capacity: 1024,
});
await node.ready;
console.log('ready');
process.on('SIGTERM', () => void node.stop().then(() => process.exit(0)));
