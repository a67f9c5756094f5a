/**
 * Grammars for JSON output (response_format, forced tool calls, the calls a model makes on its own
 * when a tool is strict), compiled by gpumesh's JSON Schema
 * compiler (@gpumesh/protocol/internal, src/json-schema-grammar/) and built once per schema. Every
 * keyword OpenAI's strict structured outputs accept is enforced; a strict schema (`strict: true`)
 * with one the grammar cannot enforce is refused (invalid_request naming the keyword and where it
 * stands), a schema that is not strict has it left out — OpenAI does not enforce those either.
 */
import { JsonGrammarBuilder, proseOrArray, SchemaKeywordError } from '@gpumesh/protocol/internal';
import type { Llama, LlamaGrammar } from 'node-llama-cpp';
import { NodeError } from '../../errors.js';
import type { ChatRequest } from '../openai-shapes.js';

/** Grammars kept at most (one per distinct response schema or set of forced tools). */
const MAX_GRAMMARS = 64;

/** A function a call may name: its parameters' schema and whether it is strict. */
export type GrammarTool = {
  /** Its index in the request's `tools` (named in an error). */
  readonly index: number;
  readonly name: string;
  readonly parameters: object | undefined;
  readonly strict: boolean;
};

export type JsonGrammars = {
  /**
   * The grammar a response_format asks for: any JSON object (json_object) or the given schema
   * (json_schema), through llama.cpp's grammar sampler, so the output parses as asked.
   */
  forResponseFormat(format: ChatRequest['response_format']): Promise<LlamaGrammar | undefined>;
  /** The grammar of a forced call: `{"name": …, "arguments": …}` of one of `tools`. */
  forToolCalls(tools: readonly GrammarTool[]): Promise<LlamaGrammar>;
  /**
   * The grammar of an answer that may call `tools` on its own (auto-tool-calls.ts): prose, or the
   * JSON array of calls `[{"name": …, "arguments": …}, …]` — at most one when not `parallel` — each
   * naming one of `tools`, a strict tool's arguments its parameters, another's any JSON object.
   */
  forAutoCalls(tools: readonly GrammarTool[], parallel: boolean): Promise<LlamaGrammar>;
  /** Refuses (invalid_request) a strict tool whose parameters the grammar cannot enforce. */
  checkStrictTools(tools: ChatRequest['tools']): void;
};

/** `compile` run with a SchemaKeywordError turned into invalid_request naming `where` it stands. */
function compiled<T>(where: string, compile: () => T): T {
  try {
    return compile();
  } catch (error) {
    if (!(error instanceof SchemaKeywordError)) throw error;
    const param = [where, error.param].filter(Boolean).join('.');
    throw new NodeError('invalid_request', {
      detail: `Invalid schema at '${param}': ${error.message}`.slice(0, 400),
    });
  }
}

/** A cache of JSON grammars by what they were built from. */
export function createJsonGrammars(llama: () => Llama): JsonGrammars {
  const grammars = new Map<string, Promise<LlamaGrammar>>();
  /** Strict tools' parameters already found enforceable. */
  const checked = new Set<string>();

  function cached(key: string, gbnf: () => string): Promise<LlamaGrammar> {
    let grammar = grammars.get(key);
    if (!grammar) {
      // The compile throws here (before the cache): a refused schema is not kept.
      const text = gbnf();
      grammar = llama()
        .createGrammar({ grammar: text })
        .catch((error: unknown) => {
          grammars.delete(key);
          throw new NodeError('runtime_error', { detail: 'llama.cpp refused the grammar.', cause: error });
        });
      if (grammars.size >= MAX_GRAMMARS) grammars.delete(grammars.keys().next().value!);
      grammars.set(key, grammar);
    }
    return grammar;
  }

  const toolExpr = (builder: JsonGrammarBuilder, tool: GrammarTool) =>
    compiled(`tools.${tool.index}.function.parameters`, () =>
      builder.object([
        ['name', builder.value({ const: tool.name }, { strict: true })],
        ['arguments', builder.value(tool.parameters ?? { type: 'object' }, { strict: tool.strict })],
      ]),
    );

  return {
    async forResponseFormat(format) {
      if (!format || format.type === 'text') return undefined;
      const schema =
        format.type === 'json_object'
          ? { type: 'object' }
          : (format.json_schema.schema ?? { type: 'object' });
      const strict = format.type === 'json_schema' && format.json_schema.strict === true;
      return cached(JSON.stringify(['format', strict, schema]), () =>
        compiled('response_format.json_schema.schema', () => {
          const builder = new JsonGrammarBuilder();
          return builder.grammar(builder.value(schema, { strict }));
        }),
      );
    },
    forToolCalls(tools) {
      return cached(JSON.stringify(['tools', tools]), () => {
        const builder = new JsonGrammarBuilder();
        const calls = tools.map((tool) => toolExpr(builder, tool));
        return compiled('tools', () => builder.grammar(builder.anyOf(calls)));
      });
    },
    forAutoCalls(tools, parallel) {
      // A tool that is not strict promises nothing of its arguments (OpenAI's either): any object,
      // so its schema is neither compiled nor a reason to refuse the request.
      const called = tools.map((tool) => (tool.strict ? tool : { ...tool, parameters: undefined }));
      return cached(JSON.stringify(['auto', parallel, called]), () => {
        const builder = new JsonGrammarBuilder();
        const calls = called.map((tool) => toolExpr(builder, tool));
        const most = parallel ? Number.POSITIVE_INFINITY : 1;
        return compiled('tools', () => builder.grammar(proseOrArray(builder.anyOf(calls), most)));
      });
    },
    checkStrictTools(tools) {
      for (const [index, tool] of (tools ?? []).entries()) {
        if (tool.function.strict !== true) continue;
        const key = JSON.stringify(tool.function.parameters ?? null);
        if (checked.has(key)) continue;
        const forced = {
          index,
          name: tool.function.name,
          parameters: tool.function.parameters,
          strict: true,
        };
        compiled('', () => {
          const builder = new JsonGrammarBuilder();
          return builder.grammar(toolExpr(builder, forced));
        });
        if (checked.size >= MAX_GRAMMARS) checked.clear();
        checked.add(key);
      }
    },
  };
}
