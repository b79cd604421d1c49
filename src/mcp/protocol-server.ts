import { JSONRPCRequest, ProtocolError, ProtocolErrorCode, Result, Server, ServerContext } from '@modelcontextprotocol/server';
import { schemaIssues } from './protocol-errors';

/** Answers a tools/call before the SDK's tools/call handling (a call that becomes a task), or leaves it to it (undefined). */
export type ToolCallDoor = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result | undefined>;

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/**
 * The SDK's low-level Server with two seams, both in `_wrapHandler`, the hook the SDK gives
 * subclasses to wrap a registered handler:
 * - a tools/call that runs as a task answers with the task (MCP 2025-11-25 `CreateTaskResult`, the
 *   2026-07-28 tasks extension's `resultType: "task"`), which the SDK (2.4, no task runtime) would
 *   refuse as a malformed CallToolResult; everything but a task creation still goes through the
 *   SDK's own checks;
 * - params of a spec method that do not fit its schema (resources/read without a uri, a cursor that
 *   is a number) are refused as InvalidParams naming each field, where the SDK answers them as an
 *   internal error carrying its schema library's dump.
 */
export class McpProtocolServer extends Server {
  toolCallDoor?: ToolCallDoor;

  protected override _wrapHandler(method: string, handler: Handler): Handler {
    const wrapped = super._wrapHandler(method, method === 'tools/call' ? handler : paramsRefusedAsInvalid(method, handler));
    if (method !== 'tools/call') return wrapped;
    return async (request, ctx) => (await this.toolCallDoor?.(request, ctx)) ?? wrapped(request, ctx);
  }
}

/**
 * The handler the SDK registers for a spec method checks the request against the method's schema
 * first, synchronously, and throws a plain Error when it does not fit (and a ProtocolError when the
 * method is not of the era); only then does it call the service's handler, which is async and so
 * never throws synchronously. A plain Error thrown synchronously is therefore that refusal.
 */
function paramsRefusedAsInvalid(method: string, handler: Handler): Handler {
  return (request, ctx) => {
    try {
      return handler(request, ctx);
    } catch (error) {
      if (error instanceof ProtocolError || !(error instanceof Error)) throw error;
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid ${method} request: ${schemaIssues(error.message)}`);
    }
  };
}
