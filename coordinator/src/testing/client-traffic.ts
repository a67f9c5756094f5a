/**
 * Client traffic for tests, as nodes receive it: a mix of apps written independently of the canary
 * generator (its own sentences, words and code) — an OpenAI-SDK chatbot with a system prompt and
 * growing histories, streaming assistants, LangChain-style calls with stop sequences, RAG and
 * templated prompts, JSON extraction, a tool-using agent, legacy completion prompts, scripts and
 * one-off questions — interleaved as sessions of concurrent users would be. Each body goes
 * through the router's node-request rules (v1/routes.ts `jobFor`): router fields removed,
 * max_tokens always set, a one-element prompt array as its string.
 */

export type ClientJob = { kind: 'chat' | 'completion'; stream: boolean; request: Record<string, unknown> };

/** The model's context and the router's cap: max_tokens for a client that names none. */
const DEFAULT_MAX_TOKENS = 4096;
const ROUTER_FIELDS = ['provider', 'stream', 'stream_options', 'user', 'max_completion_tokens', 'models'];

type Random = () => number;
type Body = Record<string, unknown>;
type Session = (r: Random) => { kind: 'chat' | 'completion'; body: Body }[];

const pick = <T>(items: readonly T[], r: Random): T => items[Math.floor(r() * items.length)]!;
const int = (lo: number, hi: number, r: Random) => lo + Math.floor(r() * (hi - lo + 1));
const chance = (p: number, r: Random) => r() < p;

const SLOTS: Record<string, readonly string[]> = {
  lang: [
    'Python',
    'JavaScript',
    'TypeScript',
    'Go',
    'Rust',
    'Java',
    'C#',
    'Ruby',
    'PHP',
    'Kotlin',
    'SQL',
    'Bash',
  ],
  framework: [
    'React',
    'Django',
    'Flask',
    'Express',
    'Next.js',
    'Spring Boot',
    'Rails',
    'Laravel',
    'FastAPI',
    'Vue',
    'Svelte',
    'pandas',
  ],
  city: [
    'Lisbon',
    'Osaka',
    'Chicago',
    'Nairobi',
    'Buenos Aires',
    'Krakow',
    'Vancouver',
    'Hanoi',
    'Marseille',
    'Edinburgh',
    'Perth',
  ],
  food: [
    'lasagna',
    'pad thai',
    'banana bread',
    'shakshuka',
    'risotto',
    'chili',
    'pancakes',
    'ramen',
    'falafel',
    'tiramisu',
    'paella',
  ],
  pet: ['cat', 'dog', 'puppy', 'kitten', 'parrot', 'rabbit', 'hamster'],
  petverb: [
    'barking at night',
    'scratching the couch',
    'biting my hands',
    'pulling on the leash',
    'eating plants',
  ],
  thing: [
    'bike',
    'laptop',
    'dishwasher',
    'wifi router',
    'car battery',
    'sourdough starter',
    'monstera',
    'espresso machine',
  ],
  person: [
    'my boss',
    'my landlord',
    'a coworker',
    'my sister',
    'my neighbor',
    'a client',
    'my professor',
    'HR',
  ],
  topic: [
    'the French Revolution',
    'photosynthesis',
    'quantum entanglement',
    'inflation',
    'the fall of Rome',
    'black holes',
    'CRISPR',
    'supply and demand',
    'the immune system',
    'plate tectonics',
    'gradient descent',
    'the Cold War',
    'compound interest',
    'ocean acidification',
    'how vaccines work',
    'the electoral college',
  ],
  error: [
    "TypeError: Cannot read properties of undefined (reading 'map')",
    "ModuleNotFoundError: No module named 'requests'",
    'Segmentation fault (core dumped)',
    'connect ECONNREFUSED 127.0.0.1:5432',
    "KeyError: 'user_id'",
    'java.lang.NullPointerException',
    'error[E0502]: cannot borrow `v` as mutable',
    'Permission denied (publickey).',
    'fatal: refusing to merge unrelated histories',
    'CUDA out of memory. Tried to allocate 2.00 GiB',
  ],
  name: [
    'Priyanka',
    'Tobias',
    'Mei',
    'Oluwaseun',
    'Grace',
    'Mateo',
    'Ingrid',
    'Yusuf',
    'Hana',
    'Dmitri',
    'Camille',
    'Rohan',
  ],
  product: [
    'noise-cancelling headphones',
    'a standing desk',
    'trail running shoes',
    'a mechanical keyboard',
    'a robot vacuum',
    'an air fryer',
    'a used Kindle',
  ],
  job: [
    'data analyst',
    'ICU nurse',
    'frontend developer',
    'product manager',
    'high school teacher',
    'electrician',
    'junior accountant',
  ],
  tone: [
    'friendlier',
    'more formal',
    'more casual',
    'more persuasive',
    'shorter',
    'less passive-aggressive',
    'funnier',
  ],
  language: [
    'French',
    'Spanish',
    'German',
    'Japanese',
    'Portuguese',
    'Italian',
    'Korean',
    'Dutch',
    'Hindi',
    'Polish',
  ],
  n: ['2', '3', '4', '5', '6', '7', '10', '12', '15', '20', '30', '45', '100'],
  year: ['2023', '2024', '2025'],
};

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

const SYSTEM_PROMPTS = [
  'You are a helpful assistant.',
  'You are ChatBuddy, a friendly assistant for a consumer app. Keep answers short, warm and easy to read. Use markdown lists when helpful. Never mention that you are an AI model unless asked.',
  'You are an expert software engineer. Answer with working code first, then a brief explanation. Prefer modern idioms and include type hints where the language supports them.',
  'You are a customer support agent for Brightline Internet. Be polite and concise. If the customer asks about billing, tell them to visit the account page. Do not promise refunds.\n\nOffice hours: Mon–Fri 8am–6pm CET.\nEscalation email: support@brightline.example',
  'You are a travel planner. Suggest realistic itineraries with approximate costs in EUR. Ask one clarifying question if the request is ambiguous.',
  'Du bist ein hilfreicher Assistent. Antworte immer auf Deutsch.',
  "You are a writing assistant. Improve clarity and grammar while keeping the author's voice. Return only the revised text.",
  "You are a patient math tutor for high school students. Explain step by step and check the student's understanding with a short question at the end.",
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

const CODE_SNIPPETS = [
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

function fill(template: string, r: Random): string {
  return template.replace(/\{(\w+)\}/g, (whole, slot: string) =>
    SLOTS[slot] ? pick(SLOTS[slot]!, r) : whole,
  );
}

function article(r: Random, sentences: number): string {
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) {
    out.push(pick(ARTICLE_SENTENCES, r));
    if (i > 0 && i % 3 === 2 && chance(0.5, r)) out.push('\n\n');
  }
  return out.join(' ').replace(/ \n\n /g, '\n\n');
}

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

function answer(r: Random): string {
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

function question(r: Random): string {
  if (chance(0.07, r)) return pick(SHORT, r);
  let q = fill(pick(QUESTIONS, r), r);
  if (chance(0.15, r)) q = `${pick(['Hey, ', 'Quick question: ', 'Hi! ', 'Please help. '], r)}${q}`;
  if (chance(0.12, r)) q += `\n\n${pick(CODE_SNIPPETS, r)}`;
  if (chance(0.1, r)) q += ` ${pick(ARTICLE_SENTENCES, r)}`;
  return q;
}

/** The Python SDK's order: messages (or model, prompt), model, then the rest alphabetically. */
function pythonSdk(kind: 'chat' | 'completion', fields: Body): Body {
  const { messages, prompt, model, ...rest } = fields;
  const head: Body = kind === 'chat' ? { messages, model } : { model, prompt };
  for (const key of Object.keys(rest).sort()) head[key] = rest[key];
  return head;
}

/** A chatbot with a system prompt: a conversation of 1–6 turns, each turn one request. */
const chatbot =
  (system: string, params: (r: Random) => Body, sdk: 'python' | 'node'): Session =>
  (r) => {
    const turns = pick([1, 1, 1, 2, 2, 3, 4, 6], r);
    const history: Body[] = system ? [{ role: 'system', content: system }] : [];
    const out: { kind: 'chat'; body: Body }[] = [];
    for (let t = 0; t < turns; t++) {
      history.push({ role: 'user', content: t === 0 ? question(r) : fill(pick(FOLLOW_UPS, r), r) });
      const fields = { model: 'm', messages: history.map((m) => ({ ...m })), ...params(r) };
      out.push({ kind: 'chat', body: sdk === 'python' ? pythonSdk('chat', fields) : fields });
      history.push({ role: 'assistant', content: answer(r) });
    }
    return out;
  };

const PERSONAS = [
  'You are a friendly assistant for a recipe website',
  'You are an internal helpdesk bot for an accounting firm',
  'You are a study buddy for university students',
  'You are a fitness coach who writes short, practical plans',
  'You are a senior data engineer helping with SQL and pipelines',
  'You are the assistant of an online bookstore',
  'You are a legal information assistant (not a lawyer)',
  'You are a language tutor for adult beginners',
  'You are a product copywriter for an outdoor gear brand',
  'You are a calm, supportive journaling companion',
  'You are a DevOps assistant for a Kubernetes platform team',
  'You are a trip planner for families with young children',
];
const RULES = [
  'Answer in at most three short paragraphs.',
  'Use bullet points for lists of steps.',
  'If you are unsure, say so instead of guessing.',
  'Never share personal data about other customers.',
  'Always end with one follow-up question.',
  'Prefer metric units.',
  'Do not give medical or financial advice; suggest a professional instead.',
  'Write in plain English and avoid jargon.',
  'When you show code, explain it line by line.',
  'Keep a warm and encouraging tone.',
  'Refuse politely if the request is off-topic.',
  'Mention the relevant help center article when there is one.',
];

/** Apps built by combining a persona and a few rules, fixed for the life of the module. */
const APP_PROMPTS = (() => {
  let seed = 0x2545f491;
  const r = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return PERSONAS.flatMap((persona) =>
    [0, 1].map(() => {
      const rules = Array.from({ length: int(1, 4, r) }, () => pick(RULES, r)).filter(
        (x, i, a) => a.indexOf(x) === i,
      );
      return `${persona}. ${rules.join(chance(0.5, r) ? ' ' : '\n- ')}`;
    }),
  );
})();

/** Many smaller apps, a few much busier than the rest. */
const appSession: Session = (r) => {
  const index = Math.min(APP_PROMPTS.length - 1, Math.floor(APP_PROMPTS.length * r() ** 2));
  const streamed = index % 3 !== 0;
  const temperature = [0.2, 0.5, 0.7, 1][index % 4]!;
  return chatbot(
    APP_PROMPTS[index]!,
    () => ({
      stream: streamed,
      temperature,
      ...(index % 2 === 0 ? { max_tokens: 600 + 100 * (index % 5) } : {}),
    }),
    index % 2 === 0 ? 'python' : 'node',
  )(r);
};

const SESSIONS: { weight: number; session: Session }[] = [
  { weight: 14, session: appSession },
  // A consumer chatbot (OpenAI Python SDK, streamed).
  {
    weight: 14,
    session: chatbot(SYSTEM_PROMPTS[1]!, () => ({ stream: true, temperature: 0.7 }), 'python'),
  },
  // The default "helpful assistant" of many scripts and demos, Node SDK.
  {
    weight: 8,
    session: chatbot(
      SYSTEM_PROMPTS[0]!,
      (r) => ({
        stream: chance(0.5, r),
        ...(chance(0.5, r) ? { max_tokens: pick([256, 512, 1024], r) } : {}),
      }),
      'node',
    ),
  },
  // A coding assistant (streamed, low temperature, long outputs).
  {
    weight: 9,
    session: chatbot(
      SYSTEM_PROMPTS[2]!,
      () => ({ stream: true, temperature: 0.2, max_tokens: 2048 }),
      'python',
    ),
  },
  // Support bot with a multi-line system prompt.
  {
    weight: 5,
    session: chatbot(SYSTEM_PROMPTS[3]!, () => ({ temperature: 0.3, max_tokens: 400, stream: true }), 'node'),
  },
  { weight: 3, session: chatbot(SYSTEM_PROMPTS[4]!, () => ({ temperature: 0.8 }), 'python') },
  { weight: 2, session: chatbot(SYSTEM_PROMPTS[5]!, () => ({ stream: true }), 'node') },
  { weight: 3, session: chatbot(SYSTEM_PROMPTS[7]!, () => ({ temperature: 0.4, top_p: 0.95 }), 'python') },
  // No system prompt: curl and quick scripts.
  {
    weight: 12,
    session: chatbot(
      '',
      (r) => ({
        ...(chance(0.6, r) ? { temperature: pick([0, 0.5, 0.7, 1, 1.2], r) } : {}),
        ...(chance(0.5, r) ? { max_tokens: pick([100, 200, 500, 1000, 1500], r) } : {}),
        ...(chance(0.1, r) ? { seed: pick([42, 1234, 7], r) } : {}),
        ...(chance(0.4, r) ? { stream: true } : {}),
      }),
      'node',
    ),
  },
  // LangChain-style chat: n=1, stop sequences, temperature 0.7, the SDK's order.
  {
    weight: 6,
    session: (r) => {
      const q = question(r);
      const body = pythonSdk('chat', {
        model: 'm',
        messages: [
          { role: 'system', content: SYSTEM_PROMPTS[0]! },
          {
            role: 'user',
            content: `Answer the following question as best you can.\n\nQuestion: ${q}\nThought:`,
          },
        ],
        n: 1,
        stream: false,
        temperature: 0.7,
        stop: ['\nObservation:', '\n\tObservation:'],
      });
      return [{ kind: 'chat', body }];
    },
  },
  // RAG: context paragraphs and a question in one templated user message.
  {
    weight: 7,
    session: (r) => {
      const context = [article(r, int(2, 5, r)), article(r, int(2, 4, r))].join('\n\n---\n\n');
      const body = {
        model: 'm',
        messages: [
          {
            role: 'system',
            content:
              'Answer using only the context. If the answer is not in the context, say "I don\'t know".',
          },
          { role: 'user', content: `Context:\n${context}\n\nQuestion: ${question(r)}` },
        ],
        temperature: 0,
        max_tokens: 512,
      };
      return [{ kind: 'chat', body }];
    },
  },
  // Summarize / translate templates.
  {
    weight: 5,
    session: (r) => {
      const text = article(r, int(2, 8, r));
      const ask = chance(0.5, r)
        ? `Summarize the following text in ${pick(['one sentence', '3 bullet points', '50 words'], r)}:\n\n${text}`
        : `Translate the following text to ${pick(SLOTS.language!, r)}:\n\n${text}`;
      return [
        {
          kind: 'chat',
          body: pythonSdk('chat', {
            model: 'm',
            messages: [{ role: 'user', content: ask }],
            temperature: 0.3,
          }),
        },
      ];
    },
  },
  // JSON extraction with response_format.
  {
    weight: 4,
    session: (r) => {
      const body = pythonSdk('chat', {
        model: 'm',
        messages: [
          {
            role: 'system',
            content:
              'Extract the customer name, order number and issue from the email. Respond with a JSON object with keys "name", "order", "issue".',
          },
          {
            role: 'user',
            content: `Hello,\n\n${article(r, int(1, 3, r))}\n\nOrder #${int(10000, 99999, r)}\n\nBest,\n${pick(SLOTS.name!, r)}`,
          },
        ],
        response_format: { type: 'json_object' },
        temperature: 0,
      });
      return [{ kind: 'chat', body }];
    },
  },
  // A tool-using agent: the tools, a call in the history, its result.
  {
    weight: 4,
    session: (r) => {
      const tools = [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Get the current weather for a city.',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
              required: ['city'],
            },
          },
        },
        {
          type: 'function',
          function: {
            name: 'search_web',
            description: 'Search the web and return the top results.',
            parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
          },
        },
      ];
      const city = pick(SLOTS.city!, r);
      const user = { role: 'user', content: `What's the weather like in ${city} right now?` };
      const id = `call_${Math.floor(r() * 1e16).toString(36)}${Math.floor(r() * 1e16).toString(36)}`.slice(
        0,
        29,
      );
      const first = pythonSdk('chat', {
        model: 'm',
        messages: [user],
        tools,
        tool_choice: 'auto',
        temperature: 0,
      });
      const second = pythonSdk('chat', {
        model: 'm',
        messages: [
          user,
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id,
                type: 'function',
                function: { name: 'get_weather', arguments: JSON.stringify({ city }) },
              },
            ],
          },
          {
            role: 'tool',
            tool_call_id: id,
            content: JSON.stringify({
              city,
              temp_c: int(-5, 35, r),
              conditions: pick(['sunny', 'light rain', 'cloudy'], r),
            }),
          },
        ],
        tools,
        tool_choice: 'auto',
        temperature: 0,
      });
      return [
        { kind: 'chat', body: first },
        { kind: 'chat', body: second },
      ];
    },
  },
  // Legacy completions: few-shot QA, sentiment, story continuation, code completion, ReAct.
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

function toNodeJob(kind: 'chat' | 'completion', body: Body): ClientJob {
  for (const key of Object.keys(body)) if (body[key] === null || body[key] === undefined) delete body[key];
  const request: Body = { ...body, model: 'm' };
  for (const f of ROUTER_FIELDS) delete request[f];
  request.max_tokens = (body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS) as number;
  if (Array.isArray(request.prompt)) request.prompt = request.prompt[0];
  return { kind, stream: body.stream === true, request };
}

/**
 * `count` client jobs of model `m` in arrival order: sessions start at random and their turns
 * interleave with other sessions' (about eight users at once).
 */
export function clientTraffic(count: number, r: Random): ClientJob[] {
  const total = SESSIONS.reduce((sum, s) => sum + s.weight, 0);
  const start = () => {
    let x = r() * total;
    for (const s of SESSIONS) {
      x -= s.weight;
      if (x < 0) return s.session(r);
    }
    return SESSIONS[0]!.session(r);
  };
  const active: ReturnType<Session>[] = [];
  const jobs: ClientJob[] = [];
  while (jobs.length < count) {
    if (active.length < 8 || chance(0.2, r)) active.push(start());
    const i = Math.floor(r() * active.length);
    const next = active[i]!.shift()!;
    if (active[i]!.length === 0) active.splice(i, 1);
    jobs.push(toNodeJob(next.kind, next.body));
  }
  return jobs;
}
