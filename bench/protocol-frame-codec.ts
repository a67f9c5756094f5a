/**
 * Frame codec: parseFrame (size, UTF-8, JSON, type, version and full schema validation) against a
 * bare JSON.parse of the same messages, measured in the same run. Also encodeFrame (validate +
 * stringify) against a bare JSON.stringify. The mix is what a busy session carries: stream chunks,
 * pings, presence, a result.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/protocol-frame-codec.ts
 */
import { createFrame, encodeFrame, type Frame, parseFrame } from '../protocol/src/index.js';

const ROUNDS = 200_000;

const chunk = (seq: number) =>
  createFrame('chunk', {
    jobId: 'job-7b1e2f',
    seq,
    chunk: {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1767225600,
      model: 'llama-3.1-8b-instruct-q4',
      choices: [{ index: 0, delta: { content: ' token' }, finish_reason: null }],
    },
  });
const frames: Frame[] = [
  chunk(0),
  chunk(1),
  chunk(2),
  chunk(3),
  createFrame('ping', { ts: 1767225600000 }),
  createFrame('presence', { status: 'online', load: { inFlight: 1, capacity: 4 } }),
  createFrame('result', {
    jobId: 'job-7b1e2f',
    response: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1767225600,
      model: 'llama-3.1-8b-instruct-q4',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello there, how can I help?' },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 },
    },
  }),
];
const texts = frames.map((frame) => JSON.stringify(frame));
const buffers = texts.map((text) => Buffer.from(text));

function time(label: string, run: (i: number) => unknown): number {
  for (let i = 0; i < 20_000; i++) run(i); // warm up (JIT, compiled validators)
  const start = process.hrtime.bigint();
  let sink = 0;
  for (let i = 0; i < ROUNDS; i++) sink += run(i) ? 1 : 0;
  const ns = Number(process.hrtime.bigint() - start) / ROUNDS;
  console.log(`${label.padEnd(44)} ${(ns / 1000).toFixed(3)} µs/frame${sink < 0 ? '!' : ''}`);
  return ns;
}

const baseParse = time('baseline JSON.parse(Buffer → string)', (i) =>
  JSON.parse(buffers[i % buffers.length]!.toString()),
);
const parse = time('parseFrame(Buffer) with full validation', (i) =>
  parseFrame(buffers[i % buffers.length]!),
);
const baseEncode = time('baseline JSON.stringify', (i) => JSON.stringify(frames[i % frames.length]));
const encode = time('encodeFrame with validation', (i) => encodeFrame(frames[i % frames.length]!));

console.log(`parseFrame / JSON.parse ratio:      ${(parse / baseParse).toFixed(2)}×`);
console.log(`encodeFrame / JSON.stringify ratio: ${(encode / baseEncode).toFixed(2)}×`);
