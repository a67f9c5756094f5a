/** What users write: questions, short messages, follow-ups, pasted articles and code. */
import { chance, pick, type Random } from './draw.js';
import { fill } from './slots.js';

const QUESTIONS = [
  'how do i reverse a list in {lang}',
  "What's the best way to learn {framework} if I already know {lang}?",
  "Can you explain {topic} like I'm 10?",
  "I'm getting this error: {error}\nWhat does it mean and how do I fix it?",
  'My {pet} keeps {petverb}. Any tips?',
  'Give me a recipe for {food} that serves {n}.',
  'write an email to {person} asking for {n} days off next month',
  'Is it worth buying {product} in {year}?',
  'What should I see in {city} if I only have {n} days?',
  'why is the sky blue',
  'Help me write a cover letter for a {job} position. I have {n} years of experience.',
  'Convert {n} miles to km',
  'What are the pros and cons of {framework} vs {framework}?',
  'Fix my {lang} code, it throws {error}',
  'explain the difference between TCP and UDP',
  "Translate 'where is the nearest pharmacy' into {language}.",
  'I have chicken thighs, rice and some spinach. What can I cook tonight in under {n} minutes?',
  'Suggest {n} names for my new {pet}',
  'tldr {topic}?',
  "How do I tell {person} that I'm leaving without burning bridges?",
  'Write a haiku about {city} in the rain',
  "What's a good beginner workout if I only have {n} minutes a day?",
  'Is {n} a prime number?',
  'How do I set up SSH keys for GitHub on Windows 11?',
  'My {thing} makes a clicking noise when I turn it on, what could it be?',
  "What's the time complexity of quicksort and why is the worst case quadratic?",
  'Plan a {n}-day trip to {city} on a tight budget.',
  'whats the difference between a list and a tuple',
  'Can you give me {n} interview questions for a {job} role?',
  'Write a short bedtime story about a {pet} who wants to visit {city}.',
  'How long should I boil an egg for a runny yolk?',
  'Explain {topic} in two paragraphs, no jargon please.',
  'Which is healthier, oatmeal or eggs for breakfast?',
  'Draft a LinkedIn post announcing that I started a new job as a {job}.',
  'What does "idempotent" mean in REST APIs?',
  'regex to match an email address',
  'How can I stop procrastinating when I work from home?',
  "What's {n}% of 2,480?",
  'Give me a SQL query that returns the top {n} customers by total order value.',
  'How do I center a div both vertically and horizontally?',
  'Should I use {framework} or {framework} for a small side project?',
  'Compare renting vs buying an apartment in {city}.',
  "I'm {n} and want to start investing, where do I begin?",
  "Write a toast for my best friend {name}'s wedding, about one minute long.",
];

const SHORT = [
  'hi',
  'hello',
  'Hello!',
  'test',
  'hey',
  'thanks',
  'thank you!',
  'ok',
  'continue',
  'yes',
  'why?',
  'more',
];

const FOLLOW_UPS = [
  'can you make it shorter',
  'Thanks! What about {framework}?',
  "That didn't work, I still get {error}",
  'perfect, thank you',
  'Now translate it into {language}.',
  'Can you explain step 2 in more detail?',
  'and if I only have {n} minutes?',
  'Make it {tone}.',
  'Give me another example please',
  'Why?',
  'ok, and what would you recommend for a beginner?',
  'Can you put that in a table?',
  'What if I use {lang} instead?',
];

const ARTICLE_SENTENCES = [
  'The city council approved a new budget on Tuesday that increases spending on public transport by 12 percent.',
  'Researchers at the university found that the new battery design retains 90 percent of its capacity after 2,000 cycles.',
  'Shares of the company fell sharply after it lowered its revenue forecast for the third quarter.',
  'The museum will reopen in March after a two-year renovation of its east wing.',
  'According to the report, remote workers spend an average of 40 minutes less per day commuting.',
  'The startup raised $18 million in a Series A round led by a Berlin-based venture fund.',
  'Heavy rain is expected across the region through the weekend, with local flooding possible.',
  'The update fixes a bug that caused the app to crash when uploading large photos.',
  'Volunteers planted more than 3,000 trees along the river during the spring festival.',
  'The team lost in the final minutes despite leading for most of the match.',
  'Our new onboarding flow reduced the time to first purchase from six days to two.',
  'Customers can now pay in installments at checkout without extra fees.',
  'The study followed 1,200 participants over five years and controlled for age and income.',
  'Please note that the office will be closed on Friday for maintenance work on the heating system.',
  'The contract runs for 24 months and can be cancelled with three months notice.',
  'Delivery times may be longer than usual because of the holiday season.',
  'I ordered the blue jacket in size M on the 3rd but received a black one in size L.',
  'Hi team, quick reminder that the quarterly review moves to Thursday at 2pm.',
  'The patient reported mild headaches and trouble sleeping over the past two weeks.',
  'Ingredients: 200 g flour, 2 eggs, 300 ml milk, a pinch of salt.',
];

export const CODE_SNIPPETS = [
  'def load_users(path):\n    with open(path) as f:\n        data = json.load(f)\n    return [u for u in data if u["active"]]\n\nusers = load_users("users.json")\nprint(users[0]["email"])',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source, held as text
  'const res = await fetch(`/api/items?page=${page}`);\nconst items = await res.json();\nsetItems(items.map((i) => ({ ...i, price: Number(i.price) })));',
  "SELECT c.name, SUM(o.total) AS revenue\nFROM customers c\nJOIN orders o ON o.customer_id = c.id\nWHERE o.created_at >= '2024-01-01'\nGROUP BY c.name\nORDER BY revenue DESC;",
  'for i in range(len(nums)):\n    for j in range(i + 1, len(nums)):\n        if nums[i] + nums[j] == target:\n            return [i, j]',
  'func main() {\n\tr := gin.Default()\n\tr.GET("/health", func(c *gin.Context) {\n\t\tc.JSON(200, gin.H{"ok": true})\n\t})\n\tr.Run(":8080")\n}',
  'import pandas as pd\n\ndf = pd.read_csv("sales.csv")\ndf["month"] = pd.to_datetime(df["date"]).dt.month\nprint(df.groupby("month")["amount"].sum())',
  'useEffect(() => {\n  const id = setInterval(tick, 1000);\n}, []);',
  '#!/bin/bash\nfor f in *.jpg; do\n  convert "$f" -resize 50% "small_$f"\ndone',
];

/** `sentences` sentences of news, mail and notes, a paragraph break now and then. */
export function article(r: Random, sentences: number): string {
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) {
    out.push(pick(ARTICLE_SENTENCES, r));
    if (i > 0 && i % 3 === 2 && chance(0.5, r)) out.push('\n\n');
  }
  return out.join(' ').replace(/ \n\n /g, '\n\n');
}

/** A user's first message: a templated question, sometimes a greeting, pasted code or an article sentence. */
export function question(r: Random): string {
  if (chance(0.07, r)) return pick(SHORT, r);
  let q = fill(pick(QUESTIONS, r), r);
  if (chance(0.15, r)) q = `${pick(['Hey, ', 'Quick question: ', 'Hi! ', 'Please help. '], r)}${q}`;
  if (chance(0.12, r)) q += `\n\n${pick(CODE_SNIPPETS, r)}`;
  if (chance(0.1, r)) q += ` ${pick(ARTICLE_SENTENCES, r)}`;
  return q;
}

/** A user's next message in a conversation. */
export const followUp = (r: Random): string => fill(pick(FOLLOW_UPS, r), r);
