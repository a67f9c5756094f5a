/**
 * `@gpumesh/protocol/internal`: what gpumesh's own node and coordinator share that is not the
 * protocol (NODE_PROTOCOL.md does not specify it). No compatibility promise: it may change in any
 * release, so other code should not import it.
 */
export { sendCoalesced } from './send-coalesced.js';
