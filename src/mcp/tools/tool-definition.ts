import type { z } from 'zod';
import type { CollectionsBackend } from '../collections-backend.port';
import type { ToolArguments } from './tool-arguments';

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
export interface CollectionTool<Args = any, Out extends z.AnyZodObject = z.AnyZodObject> {
  name: string;
  title: string;
  /** Written for a model: what the tool does, its limits, and what to call next. */
  description: string;
  /** Checked by the REST API's own input DTOs; a strict object in tools/list. */
  input: ToolArguments<Args>;
  output: Out;
  annotations: ToolHints;
  run(backend: CollectionsBackend, args: Args): Promise<z.input<Out>>;
}

export const defineTool = <Args, Out extends z.AnyZodObject>(tool: CollectionTool<Args, Out>) => tool;

export const READ_ONLY: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
