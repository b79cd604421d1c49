import { z } from 'zod/v4';

/** A tool's `inputSchema` as tools/list publishes it: a JSON Schema object. */
export type ToolInputJsonSchema = Record<string, unknown> & { type: 'object' };

const JSON_SCHEMA_DIALECT = 'http://json-schema.org/draft-07/schema#';

/**
 * The form the SDK's `registerTool` takes an input schema in (a zod schema) for a schema that is
 * written in another language: the collection tools' come from the REST API's class-validator DTOs,
 * a workflow tool's is JSON Schema its author wrote. McpServer only publishes it (tools/list renders
 * it through zod's JSON Schema generator, which takes `_zod.toJSONSchema` as the whole answer); the
 * tool checks its arguments itself, with the DTOs or ajv, so that a refusal is the tool result the
 * specification asks for. Parsing with it accepts any object and changes nothing.
 *
 * Not `.meta()`: that records every schema in zod's global registry for good, one per workflow
 * tool ever seen.
 */
export function sdkInputSchema(jsonSchema: ToolInputJsonSchema) {
  const carrier = z.looseObject({});
  // A copy each time: the generator adds to what it is handed.
  carrier._zod.toJSONSchema = () =>
    ({ $schema: JSON_SCHEMA_DIALECT, ...jsonSchema }) as ReturnType<NonNullable<typeof carrier._zod.toJSONSchema>>;
  return carrier;
}
