import type { z } from 'zod';
import type { McpBackend } from '../mcp-backend.port';
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
export interface CollectionTool<Args = any, Out extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** Written for a model: what the tool does, its limits, and what to call next. */
  description: string;
  /** Checked by the REST API's own input DTOs; a strict object in tools/list. */
  input: ToolArguments<Args>;
  output: Out;
  annotations: ToolHints;
  run(backend: McpBackend, args: Args): Promise<z.input<Out>>;
  /** Resources a client can follow from the result (a search's passages and files), as links after its text. */
  links?(output: z.output<Out>, args: Args): ResourceLinkBlock[];
}

/** An MCP `resource_link` content block: a URI that resources/read opens. */
export interface ResourceLinkBlock {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

export const defineTool = <Args, Out extends z.ZodObject>(tool: CollectionTool<Args, Out>) => tool;

export const READ_ONLY: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
