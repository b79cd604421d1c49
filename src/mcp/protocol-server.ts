import { JSONRPCRequest, Result, Server, ServerContext } from '@modelcontextprotocol/server';

/** Answers a tools/call before the SDK's tools/call handling (a call that becomes a task), or leaves it to it (undefined). */
export type ToolCallDoor = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result | undefined>;

/**
 * The SDK's low-level Server with one seam: a tools/call that runs as a task answers with the task
 * (MCP 2025-11-25 `CreateTaskResult`, the 2026-07-28 tasks extension's `resultType: "task"`), which
 * the SDK (2.4, no task runtime) would refuse as a malformed CallToolResult. `_wrapHandler` is the
 * hook the SDK gives subclasses to wrap a registered handler; everything but a task creation still
 * goes through the SDK's own checks.
 */
export class McpProtocolServer extends Server {
  toolCallDoor?: ToolCallDoor;

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const wrapped = super._wrapHandler(method, handler);
    if (method !== 'tools/call') return wrapped;
    return async (request, ctx) => (await this.toolCallDoor?.(request, ctx)) ?? wrapped(request, ctx);
  }
}
