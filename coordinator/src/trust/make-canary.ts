/** Placeholder until traffic-shaped canaries land: a chat request with generated text. */
import type { TrafficShapes } from './traffic-shapes.js';

export type CanaryJob = { kind: 'chat' | 'completion'; stream: boolean; request: Record<string, unknown> };

const WORDS =
  'the a of to and in is it you that was for on are with as his they be at one have this from or had by'.split(
    ' ',
  );

export function makeCanary(
  _shapes: TrafficShapes | undefined,
  model: string,
  random: () => number,
  maxTokens: number,
): CanaryJob {
  const words = Array.from(
    { length: 5 + Math.floor(random() * 20) },
    () => WORDS[Math.floor(random() * WORDS.length)],
  );
  return {
    kind: 'chat',
    stream: random() < 0.5,
    request: {
      model,
      messages: [{ role: 'user', content: words.join(' ') }],
      max_tokens: Math.min(maxTokens, 32),
    },
  };
}
