// A leaf module (no imports): the CLI's config reads it without loading the protocol package.

/**
 * How long streamed text may wait to share a chunk frame with the tokens after it. One frame per
 * token costs a frame build, a socket write on the node and a parse on the coordinator; on a small
 * model (~0.4 ms a token on 2 cores) that was a quarter of the throughput. A frame costs the
 * daemon's main thread ~100–300 µs of CPU on this 2-core machine, mostly in the kernel (the
 * loopback write), and wakes the coordinator, which competes for the cores with the decode: at
 * 5 ms a 2.4 ms-a-token model sent a frame per ~2 tokens, ~90 µs a token more than node-llama-cpp
 * alone. At 20 ms bench/node-throughput measured 0.958–0.967 of node-llama-cpp alone, at 50 ms
 * 0.977–1.005, alternating in the same hour. 50 ms is 20 updates a second, as smooth as a reader
 * of the stream can follow; the first token still goes out at once, and a model slower than one
 * token per 50 ms (most real ones on a CPU) still sends each token alone.
 */
export const DEFAULT_CHUNK_FLUSH_MS = 50;
