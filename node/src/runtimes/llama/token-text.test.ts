import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, type LlamaModel, type Token } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeTinyModel } from '../../models/write-tiny-model.js';
import { TokenText } from './token-text.js';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-token-text-'));
const llama = await getLlama({ gpu: false });
let model: LlamaModel;
let vocab: string[];

beforeAll(async () => {
  const { path } = await writeTinyModel({ path: join(dir, 'tiny.gguf'), seed: 3 });
  model = await llama.loadModel({ modelPath: path });
  vocab = model.fileInfo.metadata.tokenizer.ggml.tokens as string[];
});
afterAll(async () => {
  await model.dispose();
  await rm(dir, { recursive: true, force: true });
});

/** A deterministic pseudo-random source (mulberry32). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Feeds tokens as generate-text does (pending while a character is open, up to 4) and collects texts. */
function stream(tokens: Token[], piece: (pending: Token[], released: Token[]) => string): string[] {
  const out: string[] = [];
  const released: Token[] = [];
  let pending: Token[] = [];
  for (const token of tokens) {
    pending.push(token);
    const text = piece(pending, released);
    if (text.endsWith('\uFFFD') && pending.length < 4) continue;
    released.push(...pending);
    pending = [];
    out.push(text);
  }
  return out;
}

describe('TokenText', () => {
  test("behavior: gives node-llama-cpp's text for any tokens, split characters and control tokens included", () => {
    const byte = (b: number) =>
      vocab.indexOf(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`) as Token;
    // Whole UTF-8 characters spelled in byte tokens (é, €, 𝄞), spaces, punctuation and apostrophes
    // (llama.cpp's clean-up rules), control tokens (unknown, BOS, EOS: no text), and any token.
    const pieces: Token[][] = [
      [byte(0xc3), byte(0xa9)],
      [byte(0xe2), byte(0x82), byte(0xac)],
      [byte(0xf0), byte(0x9d), byte(0x84), byte(0x9e)],
      [byte(0xe2)],
      [byte(0xa9)],
      ...[' ', '.', ',', "'", 's', ' the', 'ing'].map((text) => model.tokenize(text, false)),
      [0 as Token],
      [1 as Token],
      [2 as Token],
    ];
    expect(pieces.flat().every((token) => token >= 0)).toBe(true);
    let releases = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const tokens: Token[] = [];
      while (tokens.length < 48) {
        const r = next();
        if (r < 0.5) tokens.push(Math.floor(next() * vocab.length) as Token);
        else tokens.push(...pieces[Math.floor(next() * pieces.length)]!);
      }
      const tokenText = new TokenText(model);
      const ours = stream(tokens, (pending) => {
        const text = tokenText.next(pending);
        if (!(text.endsWith('\uFFFD') && pending.length < 4)) tokenText.release(pending);
        return text;
      });
      const theirs = stream(tokens, (pending, released) => model.detokenize(pending, false, released));
      expect(ours, `seed ${seed}`).toEqual(theirs);
      releases += ours.length;
    }
    expect(releases).toBeGreaterThan(300 * 30);
  });
});
