/** The canaries the coordinator sent before issue 29, reproduced to show a classifier can win. */
/** A job as a node sees it: its kind, whether streamed, its request body. */
export type Job = { kind: string; stream: boolean; request: Record<string, unknown> };

/** The 32 prompts of the old public canary pool (trust/canary-prompts.ts before issue 29). */
export const OLD_CANARY_PROMPTS: readonly string[] = [
  'Write a short poem about the sea at night.',
  'Explain how a bicycle gear works in simple terms.',
  'The three most important things to know about compound interest are',
  'Summarize the plot of a detective story set in a small village.',
  'List five ideas for a weekend trip near a big city.',
  'Translate to French: The meeting has been moved to Thursday afternoon.',
  'What are the pros and cons of remote work?',
  'Once upon a time, in a kingdom by the mountains,',
  'Describe the taste of a ripe mango to someone who has never had one.',
  'Give me a recipe for a quick vegetable soup.',
  'How do vaccines train the immune system?',
  'Write a product description for a waterproof hiking backpack.',
  'Dear team, I wanted to follow up on',
  'The history of the printing press begins',
  'Explain the difference between a list and a tuple in Python.',
  'What should I check before buying a used car?',
  'Draft a polite reply declining a meeting invitation.',
  'In machine learning, overfitting means',
  'Tell me a fun fact about octopuses.',
  'Write a haiku about autumn leaves.',
  'How does a refrigerator keep food cold?',
  'Suggest names for a small coffee shop.',
  'The main causes of the French Revolution were',
  'Write a limerick about a cat who loves boxes.',
  'What is the capital of Australia, and why is it not Sydney?',
  'Explain recursion with an everyday example.',
  'Give three tips for better sleep.',
  'def fibonacci(n):',
  'Write the opening line of a science fiction novel.',
  'Compare electric cars and hybrid cars briefly.',
  'How do I politely ask my neighbor to lower the music?',
  'Describe a sunrise over a desert.',
];

/** A canary as the coordinator sent them before issue 29 (canary-runner.ts `runOnce`). */
export function oldCanary(model: string, random: () => number): Job {
  const base = OLD_CANARY_PROMPTS[Math.floor(random() * OLD_CANARY_PROMPTS.length)]!;
  const prompt = random() < 0.5 ? base : `${base} (${1 + Math.floor(random() * 100)})`;
  return { kind: 'completion', stream: false, request: { model, prompt, max_tokens: 32, temperature: 1 } };
}
