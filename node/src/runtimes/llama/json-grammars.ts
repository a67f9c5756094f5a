/** Grammars for JSON output (response_format, forced tool calls), built once per schema. */
import type { Llama, LlamaGrammar } from 'node-llama-cpp';
import { NodeError } from '../../errors.js';
import type { ChatRequest } from '../openai-shapes.js';

/** node-llama-cpp's integer rule (an optional exponent after the digits) and ours, without it. */
const INTEGER_RULE = /^(integer-number-rule ::= .*?) \(\[eE\] [^\n]*$/m;
const PLAIN_INTEGER_RULE = '$1';

/** Grammars kept at most (one per distinct response schema). */
const MAX_GRAMMARS = 64;

export type JsonGrammars = {
  /**
   * The grammar a response_format asks for: any JSON object (json_object) or the given schema
   * (json_schema), through llama.cpp's grammar sampler, so the output parses as asked.
   */
  forResponseFormat(format: ChatRequest['response_format']): Promise<LlamaGrammar | undefined>;
  /** The grammar of one JSON schema; invalid_request when node-llama-cpp can't build it. */
  forSchema(schema: object): Promise<LlamaGrammar>;
};

/** A cache of JSON grammars by schema text (building one parses the schema and compiles GBNF). */
export function createJsonGrammars(llama: () => Llama): JsonGrammars {
  const grammars = new Map<string, Promise<LlamaGrammar>>();

  function forSchema(schema: object): Promise<LlamaGrammar> {
    const key = JSON.stringify(schema);
    let grammar = grammars.get(key);
    if (!grammar) {
      grammar = llama()
        .createGrammarForJsonSchema(schema as Parameters<Llama['createGrammarForJsonSchema']>[0])
        .then((json) =>
          // JSON Schema's integer is a plain integer: node-llama-cpp's rule also lets an exponent
          // through ("-83e811" parses as -Infinity).
          llama().createGrammar({
            grammar: json.grammar.replace(INTEGER_RULE, PLAIN_INTEGER_RULE),
            stopGenerationTriggers: [...json.stopGenerationTriggers],
            trimWhitespaceSuffix: json.trimWhitespaceSuffix,
          }),
        )
        .catch((error: unknown) => {
          grammars.delete(key);
          throw new NodeError('invalid_request', {
            detail: `response_format's schema is not supported: ${error instanceof Error ? error.message.slice(0, 200) : 'invalid'}`,
          });
        });
      if (grammars.size >= MAX_GRAMMARS) grammars.delete(grammars.keys().next().value!);
      grammars.set(key, grammar);
    }
    return grammar;
  }

  return {
    forSchema,
    async forResponseFormat(format) {
      if (!format || format.type === 'text') return undefined;
      const schema =
        format.type === 'json_object'
          ? { type: 'object' }
          : (format.json_schema.schema ?? { type: 'object' });
      return forSchema(schema);
    },
  };
}
