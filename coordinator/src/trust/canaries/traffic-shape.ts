/**
 * The shape of one client job as the node saw it — kind, stream, which request members in which
 * order, the sampling values, and for each text its lines' lengths and kinds — never its text
 * (issue 29). Canaries are built from these (make-canary.ts) so that a node can't tell them from
 * traffic by anything but their words, and those are generated fresh (canary-text.ts).
 *
 * Each text carries `key`s: a keyed hash of a line (text-key.ts). Equal lines get equal keys, so a
 * canary can repeat a line exactly where real traffic repeated one (an app's system prompt, a
 * conversation's history, a template's first line); the key tells nothing else about the text.
 */

/** Kinds of line a text is made of; a canary line is generated as the same kind. */
export const LINE_KINDS = ['blank', 'prose', 'list', 'heading', 'code', 'data', 'fence'] as const;
export type LineKind = (typeof LINE_KINDS)[number];

export type LineShape = {
  kind: LineKind;
  /** Length in UTF-16 code units (JavaScript's `length`), indentation and marker included. */
  chars: number;
  /** The leading whitespace as sent (spaces, tabs): structure, not words. */
  indent: string;
  /**
   * Structure, not words: a list's bullet or number (`-`, `3.`), a heading's hashes (`##`), a
   * code fence with its language tag (```` ```python ````). Empty for other kinds.
   */
  marker: string;
  /** The line's last character when it is punctuation (`.`, `?`, `:` …), else ''. */
  end: string;
  /**
   * How its first character looks: 'a' a lowercase letter, 'A' an uppercase one, '0' a digit, else
   * the character itself when it is ASCII punctuation, 'x' for anything else; '' for a blank line.
   */
  start: string;
  /**
   * A label the line opens with ("Q:", "Context:", "Final Answer:"): its length without the colon
   * and its key, so that labels recur in canaries as in traffic, and its text when it is one of
   * the public labels of prompt formats (LABELS in text-shape.ts), never a name; absent for most
   * lines.
   */
  label?: { chars: number; key: number; text?: string };
  /**
   * The line's first sentence, when more follow: its length (indent and marker included), its last
   * character and key, so that a sentence many lines open with (a retrieved document's, a
   * template's) opens canary lines as often.
   */
  head?: { chars: number; end: string; key: number };
  /** Counts of characters of some classes: the canary line is adjusted to the same. */
  counts: CharCounts;
  /** Lines this shape stands for: 1, more for the tail of a long text (MAX_LINES_PER_TEXT). */
  lines: number;
  /** Keyed hash of the line's text (text-key.ts). */
  key: number;
};

/** Characters of a line by class (what word and character statistics would see), never which. */
export type CharCounts = {
  /** Decimal digits. */
  digits: number;
  /** Uppercase letters. */
  upper: number;
  /** Characters outside ASCII. */
  wide: number;
  /** Commas. */
  commas: number;
  /** Sentence ends (`.`, `?`, `!`) and other marks (`'`, `"`, `;`, `:`, `(`, `)`, `-`). */
  stops: number;
  marks: number;
  /** Words: runs of characters between spaces. */
  words: number;
  /**
   * Runs of ASCII letters: function words (canary-words.ts), short ones (≤ 3 letters) and long
   * ones (≥ 7 letters).
   */
  functionWords: number;
  shortWords: number;
  longWords: number;
  /** Markdown bold spans (`**…**`) and inline code spans (`` `…` ``). */
  bold: number;
  ticks: number;
};

/** A text as lines joined by '\n'. */
export type TextShape = readonly LineShape[];

export type ToolCallShape = {
  /** Members of the call's JSON arguments. */
  args: number;
  /** Length of the arguments' JSON. */
  chars: number;
};

export type MessageShape = {
  role: string;
  /** The message's members in the order the client sent them (known members only). */
  members: readonly string[];
  /** Absent when the message had no `content` member. */
  content?:
    | { form: 'string'; text: TextShape }
    | { form: 'parts'; parts: readonly TextShape[] }
    | { form: 'null' };
  /** Length of `name`, when present. */
  name?: number;
  toolCalls?: readonly ToolCallShape[];
  /** Keyed hash of the whole message: a message seen twice gets the same tool call ids and names. */
  key: number;
};

export type ToolShape = {
  /** Lengths of the function's name and description (0: no description). */
  name: number;
  description: number;
  /** Parameters, and how many of them are required. */
  params: number;
  required: number;
  /** Keyed hash of the tool's JSON: a tool set shared by jobs is generated the same each time. */
  key: number;
};

/** A request member's value the canary copies as is: never text (see shape-of.ts for which). */
export type Scalar = number | boolean | string;

export type TrafficShape = {
  kind: 'chat' | 'completion';
  stream: boolean;
  /** Top-level request members in the order sent, the ones a canary reproduces. */
  members: readonly string[];
  /** Values of the numeric, boolean and enum members (temperature, max_tokens, seed, tool_choice …). */
  values: Readonly<Record<string, Scalar>>;
  messages?: readonly MessageShape[];
  prompt?: TextShape;
  /**
   * `stop` as a string (list false) or a list: each item's length and key, and its text when it is
   * a stop sequence of a public prompt format (shape-of.ts KNOWN_STOPS: "\n", "</s>", "Human:" …).
   */
  stop?: { list: boolean; items: readonly { chars: number; key: number; text?: string }[] };
  tools?: readonly ToolShape[];
  /** `tool_choice` naming a function (an object); a string tool_choice is in `values`. */
  namedToolChoice?: boolean;
  /** `response_format`: its type; for json_schema, the schema's property count and its key. */
  responseFormat?: { type: string; properties: number; key: number };
};

/** Every key a shape holds, for counting how often a text recurs (traffic-shapes.ts). */
/** The keys of `shape`'s lines (and their opening sentences): the texts a canary may repeat whole. */
export function lineKeysOf(shape: TrafficShape): Set<number> {
  const keys = new Set<number>();
  const text = (t: TextShape) => {
    for (const line of t) {
      keys.add(line.key);
      if (line.head) keys.add(line.head.key);
    }
  };
  for (const m of shape.messages ?? []) {
    if (m.content?.form === 'string') text(m.content.text);
    if (m.content?.form === 'parts') for (const part of m.content.parts) text(part);
  }
  if (shape.prompt) text(shape.prompt);
  return keys;
}

export function keysOf(shape: TrafficShape): number[] {
  const keys: number[] = [];
  const text = (t: TextShape) => {
    for (const line of t) {
      keys.push(line.key);
      if (line.label) keys.push(line.label.key);
      if (line.head) keys.push(line.head.key);
    }
  };
  for (const m of shape.messages ?? []) {
    keys.push(m.key);
    if (m.content?.form === 'string') text(m.content.text);
    if (m.content?.form === 'parts') for (const part of m.content.parts) text(part);
  }
  if (shape.prompt) text(shape.prompt);
  for (const s of shape.stop?.items ?? []) keys.push(s.key);
  for (const t of shape.tools ?? []) keys.push(t.key);
  if (shape.responseFormat) keys.push(shape.responseFormat.key);
  return keys;
}
