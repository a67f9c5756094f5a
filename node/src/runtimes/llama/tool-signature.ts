/**
 * Tool definitions as the model reads them: one line per tool, a TypeScript-like signature and
 * its description — `- get_weather(city: string, unit?: "c" | "f"): Get the weather` — instead of
 * the parameters' JSON Schema, which is 3–5 times longer and buries the names a model must copy.
 */

/** Nesting rendered in full; deeper schemas read `any`. */
const MAX_DEPTH = 6;

type Schema = Record<string, unknown>;

/** The system turn that lists the tools and the one answer form the runtime parses as calls. */
export function toolsPrompt(tools: { name: string; description?: string; parameters?: unknown }[]): string {
  const lines = tools.map((tool) => {
    const params = tool.parameters as Schema | undefined;
    const signature = `${tool.name}(${params ? fields(params, 0) : ''})`;
    return tool.description ? `- ${signature}: ${tool.description}` : `- ${signature}`;
  });
  return [
    'You can call these tools. To call tools, answer with only a JSON array of calls: [{"name": "<tool>", "arguments": {...}}]',
    ...lines,
  ].join('\n');
}

/** An object schema's properties as `name: type` pairs, `name?:` when not required. */
function fields(schema: Schema, depth: number): string {
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(properties)
    .map(([name, value]) => `${name}${required.has(name) ? '' : '?'}: ${schemaType(value, depth + 1)}`)
    .join(', ');
}

/** A JSON Schema as a TypeScript-like type. */
export function schemaType(schema: unknown, depth = 0): string {
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return 'any';
  const s = schema as Schema;
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const union = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(union)) return union.map((u) => schemaType(u, depth + 1)).join(' | ');
  if (typeof s.$ref === 'string') return s.$ref.split('/').pop() ?? 'any';
  if (Array.isArray(s.type)) return s.type.map((t) => schemaType({ ...s, type: t }, depth)).join(' | ');
  switch (s.type) {
    case 'object':
      return s.properties ? `{${fields(s, depth)}}` : 'object';
    case 'array': {
      const item = schemaType(s.items, depth + 1);
      return item.includes(' | ') ? `(${item})[]` : `${item}[]`;
    }
    case 'string':
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null':
      return s.type;
    default:
      return s.properties ? `{${fields(s, depth)}}` : 'any';
  }
}
