/**
 * What the grammar of a strict tool in `tool_choice` auto costs (json-grammars.ts `forAutoCalls`:
 * prose or the call array): tokens per second of prose answers through the daemon's llama runtime
 * with the tool strict (under the grammar) vs the same tool not strict (no grammar), in the same
 * run, one job each way per round in alternating order. Greedy decoding, so both write the same
 * prose (the grammar allows the model's own choice). Models: gpumesh/mini-chat Q8_0 (trained, 768
 * tokens) and the 2 × 64 and 6 × 384 generated models (random weights, 400 tokens). llama.cpp checks the grammar
 * per candidate token, so the cost grows with the vocabulary: larger on a 32k–150k-token model.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/auto-tool-grammar.ts [--rounds 20]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeTinyModel } from '@gpumesh/node';
import { getLlama } from 'node-llama-cpp';
import { createLlamaRuntime } from '../node/src/runtimes/llama/llama-runtime.js';
import { summarizeRatios } from './ratio-summary.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '20' } } });
const ROUNDS = Number(values.rounds);
const MAX_TOKENS = 128;

const dir = mkdtempSync(path.join(tmpdir(), 'gm-bench-auto-grammar-'));
const llama = await getLlama({ gpu: false });
const { path: tinyPath } = await writeTinyModel({ path: path.join(dir, 'tiny.gguf'), layers: 2, width: 64 });
const { path: mediumPath } = await writeTinyModel({
  path: path.join(dir, 'medium.gguf'),
  layers: 6,
  width: 384,
  heads: 6,
  feedForward: 1024,
});
const MODELS = [
  {
    id: 'mini-chat Q8_0',
    path: path.resolve(import.meta.dirname, '../models/mini-chat/gpumesh-mini-chat-Q8_0.gguf'),
    prompt: 'Hello! Who are you?',
  },
  // The smallest model shows the grammar's per-token cost most: little else is done per token.
  { id: 'tiny (random)', path: tinyPath, prompt: 'Once upon a time' },
  { id: 'medium (random)', path: mediumPath, prompt: 'Once upon a time' },
];
const parameters = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 32 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
  required: ['city', 'days'],
  additionalProperties: false,
};

try {
  for (const spec of MODELS) {
    const runtime = createLlamaRuntime({
      llama,
      threads: 1,
      models: [{ id: 'm', path: spec.path, maxConcurrency: 1, contextLength: 2048 }],
    });
    await runtime.load();
    /** One prose answer in auto mode: its completion tokens and milliseconds. */
    const answer = async (strict: boolean) => {
      const started = performance.now();
      const response = await runtime.run({
        kind: 'chat',
        model: 'm',
        stream: false,
        request: {
          messages: [{ role: 'user', content: spec.prompt }],
          tools: [{ type: 'function', function: { name: 'get_weather', strict, parameters } }],
          temperature: 0,
          max_tokens: MAX_TOKENS,
        },
      });
      const ms = performance.now() - started;
      const choice = (response.choices as { finish_reason: string }[])[0]!;
      if (choice.finish_reason === 'tool_calls')
        throw new Error(`${spec.id}: the answer was calls, not prose`);
      return { tokens: (response.usage as { completion_tokens: number }).completion_tokens, ms };
    };
    // Warm-up: the grammar is compiled and cached once, as a node serving the same tools would.
    await answer(true);
    await answer(false);
    const ratios: number[] = [];
    const totals = { grammar: { tokens: 0, ms: 0 }, none: { tokens: 0, ms: 0 } };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [true, false] : [false, true];
      const rates: Record<string, number> = {};
      for (const strict of order) {
        const { tokens, ms } = await answer(strict);
        const side = strict ? totals.grammar : totals.none;
        side.tokens += tokens;
        side.ms += ms;
        rates[String(strict)] = tokens / ms;
      }
      ratios.push(rates.true! / rates.false!);
    }
    await runtime.close();
    const rate = (side: { tokens: number; ms: number }) => ((side.tokens / side.ms) * 1000).toFixed(0);
    const s = summarizeRatios(ratios);
    console.log(
      `${spec.id}: grammar ${rate(totals.grammar)} tokens/s, none ${rate(totals.none)} tokens/s ` +
        `(${totals.grammar.tokens} and ${totals.none.tokens} tokens); ratio grammar/none: median ` +
        `${s.median.toFixed(3)} (95 % CI ${s.medianLow.toFixed(3)}–${s.medianHigh.toFixed(3)}, ` +
        `IQR ${s.q1.toFixed(3)}–${s.q3.toFixed(3)}, ${s.count} rounds)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
