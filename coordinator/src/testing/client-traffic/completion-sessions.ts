/** Legacy completion prompts: few-shot QA, sentiment, story continuation, code completion. */
import type { Session } from './chatbot.js';
import { pythonSdk } from './chatbot.js';
import { chance, int, pick } from './draw.js';
import { CODE_SNIPPETS } from './user-text.js';

const STORY_OPENINGS = [
  'The lighthouse keeper had not seen a ship in eleven days when the radio finally crackled.',
  'It was the kind of Tuesday that made Mara regret ever learning to drive.',
  'Nobody in the village remembered who had planted the orange tree in the square.',
  'The last train out of the city left at 11:52, and Theo was still three blocks away.',
  'My grandmother kept a box of letters under her bed that none of us were allowed to open.',
];

const FEW_SHOT = [
  ['What is the capital of France?', 'Paris'],
  ['How many legs does a spider have?', '8'],
  ['Who wrote "Pride and Prejudice"?', 'Jane Austen'],
  ['What is the boiling point of water in Fahrenheit?', '212'],
  ['What planet is known as the Red Planet?', 'Mars'],
];

const TRIVIA = [
  'What is the largest ocean on Earth?',
  'Who painted the Mona Lisa?',
  'What is the chemical symbol for gold?',
  'How many continents are there?',
  'In which year did the Berlin Wall fall?',
  'What is the square root of 144?',
  'What language is spoken in Brazil?',
  'Which element has the atomic number 1?',
];

const REVIEWS = [
  'Arrived quickly and works exactly as described, would buy again.',
  'The battery died after two days and support never answered my emails.',
  'Decent quality for the price but the sizing runs small.',
  'Absolutely love it, my kids use it every single day!',
  'Not worth the money. The app keeps disconnecting.',
  'Comfortable, but the color is different from the photos.',
];

/** The completion sessions of the traffic mix, with their weights. */
export const COMPLETION_SESSIONS: { weight: number; session: Session }[] = [
  {
    weight: 4,
    session: (r) => {
      const shots = FEW_SHOT.slice(0, int(2, 5, r))
        .map(([q, a]) => `Q: ${q}\nA: ${a}`)
        .join('\n\n');
      const prompt = `${shots}\n\nQ: ${pick(TRIVIA, r)}\nA:`;
      return [
        {
          kind: 'completion',
          body: pythonSdk('completion', { model: 'm', prompt, max_tokens: 32, temperature: 0, stop: ['\n'] }),
        },
      ];
    },
  },
  {
    weight: 3,
    session: (r) => {
      const prompt = `Classify the sentiment of the review as positive, negative or mixed.\n\nReview: ${pick(REVIEWS, r)}\nSentiment:`;
      return [{ kind: 'completion', body: { model: 'm', prompt, max_tokens: 3, temperature: 0 } }];
    },
  },
  {
    weight: 3,
    session: (r) => {
      const prompt = `${pick(STORY_OPENINGS, r)}${chance(0.5, r) ? ` ${pick(STORY_OPENINGS, r)}` : ''}`;
      return [
        {
          kind: 'completion',
          body: pythonSdk('completion', {
            model: 'm',
            prompt,
            max_tokens: pick([200, 300, 500], r),
            temperature: 0.9,
            top_p: 0.95,
            stream: chance(0.5, r),
          }),
        },
      ];
    },
  },
  {
    weight: 2,
    session: (r) => {
      const snippet = pick(CODE_SNIPPETS, r);
      const prompt = `# ${pick(['Python', 'utility'], r)} helpers\n${snippet
        .split('\n')
        .slice(0, int(2, 4, r))
        .join('\n')}\n`;
      return [
        {
          kind: 'completion',
          body: { model: 'm', prompt, max_tokens: 128, temperature: 0.2, stop: ['\n\n\n', '```'] },
        },
      ];
    },
  },
];
