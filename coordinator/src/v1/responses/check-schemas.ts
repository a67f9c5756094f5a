import { checkJsonSchema } from '../check-json-schema.js';
import type { ResponsesBody } from './schemas.js';

/**
 * The JSON Schemas of a Responses request checked before routing, named as the Responses API names
 * them (`text.format.schema…`, `tools.N.parameters…`): `text.format`'s, and those of the tools that
 * are strict or may be forced (tool_choice "required" or naming them). The chat request built from
 * it (to-chat.ts) is checked again under chat's names, finding nothing new.
 */
export function checkResponsesSchemas(body: ResponsesBody): void {
  const format = body.text?.format;
  if (format?.type === 'json_schema') {
    checkJsonSchema(
      format.schema,
      format.strict === true,
      'text.format.schema',
      `text.format '${format.name}'`,
    );
  }
  const choice = body.tool_choice;
  for (const [i, tool] of (body.tools ?? []).entries()) {
    const forced = choice === 'required' || (typeof choice === 'object' && choice.name === tool.name);
    if (!tool.parameters || (tool.strict !== true && !forced)) continue;
    checkJsonSchema(
      tool.parameters,
      tool.strict === true,
      `tools.${i}.parameters`,
      `function '${tool.name}'`,
    );
  }
}
