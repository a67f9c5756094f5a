import { describe, expect, test } from 'vitest';
import { makeCanary } from './make-canary.js';
import { seededRandom } from './seeded-random.js';
import { TrafficPhrases } from './traffic-phrases.js';
import { TrafficShapes } from './traffic-shapes.js';

const seed = (n: number) => seededRandom(new Uint8Array(16).fill(n));
const chat = (system: string, user: string) => ({
  model: 'm',
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ],
  max_tokens: 64,
});
const COMMON = [
  'How do I reverse a list in Python?',
  'Can you explain how a hash map works?',
  'Write a short poem about the sea at night.',
  'What is the difference between TCP and UDP?',
];

describe('traffic phrases', () => {
  test('behavior: a phrase fewer than 3 requests used never comes out; once 3 did, it can', () => {
    const phrases = new TrafficPhrases();
    for (let i = 0; i < 20; i++) phrases.note(chat('You are a helpful assistant.', COMMON[i % 4]!));
    const secret = 'My account number is 4471 and my name is Zorblax Quint.';
    const walks = (n: number) => {
      const random = seed(7);
      return Array.from({ length: n }, () => phrases.sentence('user', random) ?? '');
    };
    phrases.note(chat('You are a helpful assistant.', secret));
    phrases.note(chat('You are a helpful assistant.', secret));
    expect(walks(2_000).filter((s) => s.includes('Zorblax'))).toEqual([]);
    expect(new Set(walks(2_000)).size).toBeGreaterThan(1);
    phrases.note(chat('You are a helpful assistant.', secret));
    expect(walks(2_000).some((s) => s.includes('Zorblax'))).toBe(true);
  });

  test('behavior: a walk is the same for the same draw while the counts grow alike', () => {
    const phrases = new TrafficPhrases();
    const note = () => {
      for (const user of COMMON) phrases.note(chat('You are a helpful assistant.', user));
    };
    for (let i = 0; i < 3; i++) note();
    const before = Array.from({ length: 50 }, (_, i) => phrases.sentence('user', seed(i)));
    for (let i = 0; i < 5; i++) note();
    const after = Array.from({ length: 50 }, (_, i) => phrases.sentence('user', seed(i)));
    expect(after).toEqual(before);
    expect(new Set(before).size).toBe(COMMON.length);
  });

  test('behavior: memory is bounded; what is learnt follows the traffic', () => {
    const phrases = new TrafficPhrases({ maxSteps: 200 });
    for (let i = 0; i < 30; i++) phrases.note(chat('Be brief.', 'Old topic: tell me about sailing boats.'));
    for (let i = 0; i < 300; i++)
      phrases.note(chat('Be brief.', `Gardening tips please. Plot ${i} is mine.`));
    const random = seed(3);
    const walked = Array.from({ length: 500 }, () => phrases.sentence('user', random) ?? '');
    expect(walked.filter((s) => s.includes('sailing'))).toEqual([]);
    expect(walked.some((s) => s.includes('Gardening'))).toBe(true);
  });

  test('behavior: no phrase is learnt from a client that denied data collection', () => {
    const shapes = new TrafficShapes();
    for (let i = 0; i < 20; i++)
      shapes.note('m', 'chat', chat('You are Zorblax, the assistant.', 'Tell me about Zorblax.'), false, {
        shareable: false,
      });
    expect(shapes.size('m')).toBe(20);
    const random = seed(4);
    for (let i = 0; i < 200; i++)
      expect(JSON.stringify(makeCanary(shapes, 'm', random).request)).not.toContain('Zorblax');
  });

  test('behavior: a line is carried whole only once 10 distinct requests carried it', () => {
    const system = 'You are Quillbot Prime, the assistant of the Harbor Street bakery, open daily.';
    const canaries = (requests: number) => {
      const shapes = new TrafficShapes({ phrases: { minRequests: 100 } }); // no phrase walks: whole lines only
      for (let i = 0; i < requests; i++) shapes.note('m', 'chat', chat(system, `Question ${i}?`), false);
      const random = seed(5);
      return Array.from({ length: 50 }, () => makeCanary(shapes, 'm', random).request.messages) as {
        content: string;
      }[][];
    };
    expect(
      canaries(9)
        .flat()
        .filter((m) => m.content === system),
    ).toEqual([]);
    expect(
      canaries(10)
        .flat()
        .filter((m) => m.content === system).length,
    ).toBeGreaterThan(40);
  });
});
