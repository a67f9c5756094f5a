import { ApiError } from '../errors.js';
import { checkJsonSchema } from './check-json-schema.js';

/** The response formats OpenAI's chat completions take (and every node implements). */
const RESPONSE_FORMATS: readonly string[] = ['text', 'json_object', 'json_schema'];

/**
 * A chat's or completion's `response_format`, checked before routing: its `type` is one of
 * OpenAI's three (`response_format.type`), json_schema comes with its `json_schema` object, and
 * that schema is one the nodes' grammar takes (check-json-schema.ts: under `strict`, every keyword
 * enforced; a 400 naming the keyword where it stands otherwise).
 */
export function checkResponseFormat(body: Record<string, unknown>): void {
  const format = body.response_format as { type?: unknown; json_schema?: unknown } | undefined;
  if (format !== undefined) {
    if (typeof format.type !== 'string' || !RESPONSE_FORMATS.includes(format.type))
      invalid(
        `Invalid value: '${String(format.type)}'. Supported values are: 'text', 'json_object', and 'json_schema'.`,
        'response_format.type',
      );
    if (
      format.type === 'json_schema' &&
      (typeof format.json_schema !== 'object' || format.json_schema === null)
    )
      invalid("Missing required parameter: 'response_format.json_schema'.", 'response_format.json_schema');
    if (format.type === 'json_schema') {
      const spec = format.json_schema as { name?: unknown; schema?: unknown; strict?: unknown };
      checkJsonSchema(
        spec.schema ?? { type: 'object' },
        spec.strict === true,
        'response_format.json_schema.schema',
        `response_format '${String(spec.name ?? '')}'`,
      );
    }
  }
}

function invalid(message: string, param: string): never {
  throw new ApiError('invalid_request', message, { param });
}
