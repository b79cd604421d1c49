import type { z } from 'zod';
import type { CollectionsBackend } from '../collections-backend.port';

/** The four behaviour hints of the MCP specification, always all set so a client never guesses. */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** True when the tool reaches outside the service (e.g. downloads a URL). */
  openWorldHint: boolean;
}

/**
 * One MCP tool as plain data plus one function: no SDK or Nest types, so the remote server and
 * the stdio program register the very same objects.
 */
export interface CollectionTool<In extends z.AnyZodObject = z.AnyZodObject, Out extends z.AnyZodObject = z.AnyZodObject> {
  name: string;
  title: string;
  /** Written for a model: what the tool does, its limits, and what to call next. */
  description: string;
  /** A strict object: unknown properties are refused, and the JSON Schema says so. */
  input: In;
  output: Out;
  annotations: ToolHints;
  run(backend: CollectionsBackend, args: z.output<In>): Promise<z.input<Out>>;
}

export const defineTool = <In extends z.AnyZodObject, Out extends z.AnyZodObject>(tool: CollectionTool<In, Out>) => tool;

export const READ_ONLY: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
