/**
 * The body of POST /v1/responses: OpenAI's Responses API, the part a chat model served by a node
 * can answer (text, function tools, JSON output, sampling, stored conversations). Members it can't
 * honour are refused by name (additionalProperties false): `reasoning`, built-in tools, files.
 */
import { type Static, Type } from '@sinclair/typebox';
import { MAX_MESSAGES, ProviderPreferences } from '../schemas.js';

const Text = Type.String({ maxLength: 1_000_000 });

const InputText = Type.Object(
  { type: Type.Union([Type.Literal('input_text'), Type.Literal('output_text')]), text: Text },
  { additionalProperties: true },
);

const MessageItem = Type.Object(
  {
    type: Type.Optional(Type.Literal('message')),
    role: Type.Union([
      Type.Literal('user'),
      Type.Literal('system'),
      Type.Literal('developer'),
      Type.Literal('assistant'),
    ]),
    content: Type.Union([Text, Type.Array(InputText, { minItems: 1, maxItems: 64 })]),
    id: Type.Optional(Type.String({ maxLength: 256 })),
    status: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { additionalProperties: false },
);

const FunctionCallItem = Type.Object(
  {
    type: Type.Literal('function_call'),
    call_id: Type.String({ minLength: 1, maxLength: 256 }),
    name: Type.String({ minLength: 1, maxLength: 256 }),
    arguments: Text,
    id: Type.Optional(Type.String({ maxLength: 256 })),
    status: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { additionalProperties: false },
);

const FunctionCallOutputItem = Type.Object(
  {
    type: Type.Literal('function_call_output'),
    call_id: Type.String({ minLength: 1, maxLength: 256 }),
    output: Text,
    id: Type.Optional(Type.String({ maxLength: 256 })),
    status: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { additionalProperties: false },
);

/** An output item of a stored response, by its id (what the AI SDK sends while `store` is on). */
const ItemReference = Type.Object(
  { type: Type.Literal('item_reference'), id: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);

export const InputItem = Type.Union([MessageItem, FunctionCallItem, FunctionCallOutputItem, ItemReference]);

const FunctionTool = Type.Object(
  {
    type: Type.Literal('function'),
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])),
    parameters: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
    strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  { additionalProperties: false },
);

const ToolChoice = Type.Union([
  Type.Literal('auto'),
  Type.Literal('none'),
  Type.Literal('required'),
  Type.Object({ type: Type.Literal('function'), name: Type.String({ minLength: 1, maxLength: 64 }) }),
]);

const Format = Type.Union([
  Type.Object({ type: Type.Literal('text') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('json_object') }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal('json_schema'),
      name: Type.String({ minLength: 1, maxLength: 64 }),
      schema: Type.Record(Type.String(), Type.Unknown()),
      description: Type.Optional(Type.String({ maxLength: 4096 })),
      strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    },
    { additionalProperties: false },
  ),
]);

export const ResponsesBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Union([Text, Type.Array(InputItem, { minItems: 1, maxItems: MAX_MESSAGES })]),
    instructions: Type.Optional(Type.Union([Text, Type.Null()])),
    previous_response_id: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()]),
    ),
    tools: Type.Optional(Type.Array(FunctionTool, { maxItems: 128 })),
    tool_choice: Type.Optional(ToolChoice),
    parallel_tool_calls: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    text: Type.Optional(Type.Object({ format: Type.Optional(Format) }, { additionalProperties: false })),
    max_output_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
    top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
    metadata: Type.Optional(
      Type.Union([
        Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), { maxProperties: 16 }),
        Type.Null(),
      ]),
    ),
    store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    truncation: Type.Optional(Type.Literal('disabled')),
    // One tier of service here: OpenAI's `auto` and `default` (OpenRouter's SDK sends `auto`).
    service_tier: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('default'), Type.Null()])),
    // Extra output to include: there is none we add, so only an empty list (the Agents SDK's default).
    include: Type.Optional(Type.Union([Type.Array(Type.String(), { maxItems: 0 }), Type.Null()])),
    user: Type.Optional(Type.String({ maxLength: 256 })),
    provider: Type.Optional(ProviderPreferences),
  },
  { additionalProperties: false },
);

export type ResponsesBody = Static<typeof ResponsesBody>;
export type InputItem = Static<typeof InputItem>;
