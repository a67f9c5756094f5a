/** What assistants answer, as the histories of multi-turn conversations carry it. */
import { chance, int, pick, type Random } from './draw.js';
import { fill } from './slots.js';
import { CODE_SNIPPETS } from './user-text.js';

const ANSWER_SENTENCES = [
  "Sure! Here's a quick overview.",
  'Great question.',
  'There are a few ways to approach this, depending on your setup.',
  'The short answer is yes, but it depends on what you need.',
  'The most common cause is a missing dependency or a typo in the import path.',
  'In most cases you can fix this by restarting the service after changing the config.',
  "Here's a simple version you can adapt.",
  'Keep in mind that prices and availability change often, so double-check before you book.',
  'A good rule of thumb is to start small and measure before optimizing.',
  'This works because the loop stops as soon as the condition becomes false.',
  'If you want, I can also show you how to write tests for it.',
  "Let me know if you'd like more detail on any of these!",
  'Both options are reasonable; the right choice depends on your team and timeline.',
  'You should see the change immediately after saving the file.',
  'Most people find the second approach easier to maintain.',
  'It is usually safe, but back up your data first.',
  'The key idea is that each step builds on the previous one.',
  'That error means the variable is undefined at the moment you call the method on it.',
];

const LIST_ITEMS = [
  '**Check the basics** – make sure everything is plugged in and up to date.',
  '**Start with a plan** – write down what you want to achieve this week.',
  'Use environment variables for secrets instead of hard-coding them.',
  'Drink a glass of water before each meal.',
  'Keep the function small and give it a descriptive name.',
  'Book museums online to skip the queues.',
  'Add a timeout so the request does not hang forever.',
  'Review your budget at the end of every month.',
  'Try the free tier first before committing to a paid plan.',
  'Walk for ten minutes after lunch.',
];

/** Answer sentences with slots: assistants say the same kinds of things about different subjects. */
const ANSWER_TEMPLATES = [
  'The main difference is that {framework} handles routing for you, while plain {lang} leaves it to you.',
  'If you only have {n} minutes, focus on the warm-up and skip the cool-down.',
  'In {city}, the old town is walkable, so you can see most of it in a day.',
  'You can store the result in a variable and print it at the end of the loop.',
  'A {pet} usually does this when it is bored or wants your attention.',
  'For {food}, the trick is to let the dough rest for at least {n} minutes.',
  'I would start with {framework}, because its documentation is friendlier for beginners.',
  'That depends on your budget, but for most people {product} is a reasonable choice.',
  'When you write to {person}, keep it short and mention the dates up front.',
  '{topic} can be explained with a simple analogy: think of it as a recipe with feedback.',
  'Your code fails because the list is empty on the first call, so the index does not exist.',
  'Try running the command again with the verbose flag to see where it stops.',
  'Most tutorials skip this step, but it saves a lot of time later on.',
  'The error usually goes away once you reinstall the package and restart your editor.',
  'As a {job}, you should highlight the projects where you had the most impact.',
  'You can also ask {person} for feedback before you send the final version.',
  'It takes around {n} days to get used to it, so do not give up too early.',
  'Here is a version that uses fewer lines and is easier to read.',
];

/** An answer: a sentence, sometimes a numbered list or a code block, and a closing. */
export function answer(r: Random): string {
  const parts = [chance(0.5, r) ? pick(ANSWER_SENTENCES, r) : fill(pick(ANSWER_TEMPLATES, r), r)];
  if (chance(0.5, r)) {
    parts.push('');
    for (let i = int(2, 5, r), k = 1; k <= i; k++) parts.push(`${k}. ${pick(LIST_ITEMS, r)}`);
  }
  if (chance(0.25, r)) parts.push('', '```python', pick(CODE_SNIPPETS, r), '```');
  const closing = Array.from({ length: int(1, 3, r) }, () =>
    chance(0.4, r) ? pick(ANSWER_SENTENCES, r) : fill(pick(ANSWER_TEMPLATES, r), r),
  );
  parts.push('', closing.join(' '));
  return parts.join('\n');
}
