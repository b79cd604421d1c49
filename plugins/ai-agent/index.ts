import {
  ChatMessage,
  ChatResponse,
  ChatToolCall,
  defineNode,
  isNodeError,
  NodeConfigurationError,
  NodeContext,
  NodeTimeoutError,
  NodeUpstreamError,
} from 'workflow-collection-service/sdk';
import { AiAgentParameters } from './ai-agent.parameters';
import { AgentTool, agentTools, argumentsProblem, ToolFailure } from './agent-tools';

export { AiAgentParameters };

/** What the agent outputs. */
interface AgentAnswer {
  /** The final answer's text. */
  answer: string;
  /** The answer parsed, when `outputSchema` is set (it matched the schema). */
  json?: unknown;
  model: string;
  /** Model calls made. */
  iterations: number;
  toolCalls: number;
  usage: { promptTokens: number; completionTokens: number };
}

/** A tool result longer than this is cut before the model reads it. */
const MAX_TOOL_RESULT_CHARS = 32_000;

export default defineNode({
  type: 'ai-agent',
  version: 1,
  displayName: 'AI Agent',
  description:
    "Answers a message with a language model (any OpenAI-compatible endpoint with tool calling) that may call tools in a loop: search the chosen collections, run published workflows, call the tools of outside MCP servers. Up to maxIterations model calls within a time and token budget; a tool's failure goes back to the model as its result. Remembers the conversation per sessionKey. Outputs {answer, json?, model, iterations, toolCalls, usage}; the run record shows each model and tool call as a sub-step.",
  parameters: AiAgentParameters,
  defaultRunMode: 'input',
  execute: (ctx) => runAgent(ctx),
});

export async function runAgent(ctx: NodeContext<AiAgentParameters>): Promise<AgentAnswer> {
  const p = ctx.params;
  if (p.credential && !p.endpoint)
    throw new NodeConfigurationError('credential authenticates to an endpoint of your own: set endpoint too', {
      details: { parameter: 'endpoint' },
    });
  if (p.endpoint && !p.model) throw new NodeConfigurationError('model is required with endpoint', { details: { parameter: 'model' } });
  if (p.outputSchema) {
    try {
      argumentsProblem(p.outputSchema, null);
    } catch (error) {
      throw new NodeConfigurationError(`outputSchema is not a usable JSON Schema: ${(error as Error).message}`, {
        details: { parameter: 'outputSchema' },
      });
    }
  }
  const budget = AbortSignal.timeout(p.timeBudgetMs);
  const signal = AbortSignal.any([ctx.signal, budget]);
  const overBudget = () =>
    new NodeTimeoutError(`The agent used its time budget of ${p.timeBudgetMs} ms`, { details: { parameter: 'timeBudgetMs' } });

  const history = p.sessionKey ? await ctx.memory.load(p.sessionKey) : [];
  const { tools, sessions } = await agentTools(ctx, signal).catch((error: unknown) => {
    throw budget.aborted && !ctx.signal.aborted ? overBudget() : error;
  });
  try {
    const system = [
      p.systemPrompt,
      p.outputSchema ? `Give your final answer as JSON only, matching this JSON Schema:\n${JSON.stringify(p.outputSchema)}` : undefined,
    ]
      .filter(Boolean)
      .join('\n\n');
    const messages: ChatMessage[] = [
      ...(system ? [{ role: 'system' as const, content: system }] : []),
      ...history,
      { role: 'user', content: p.message },
    ];
    const usage = { promptTokens: 0, completionTokens: 0 };
    let toolCalls = 0;
    let sent = 0;
    let schemaRetried = false;
    for (let iteration = 1; iteration <= p.maxIterations; iteration++) {
      const fresh = messages.slice(sent);
      sent = messages.length;
      const answer = await modelCall(ctx, messages, fresh, tools, signal);
      usage.promptTokens += answer.usage?.promptTokens ?? 0;
      usage.completionTokens += answer.usage?.completionTokens ?? 0;
      if (p.tokenBudget !== undefined && usage.promptTokens + usage.completionTokens > p.tokenBudget) {
        throw new NodeUpstreamError(
          `The agent used ${usage.promptTokens + usage.completionTokens} tokens, over its token budget of ${p.tokenBudget}`,
          {
            retryable: false,
            details: { parameter: 'tokenBudget', usage },
          },
        );
      }
      const calls = answer.toolCalls ?? [];
      if (calls.length) {
        messages.push({ role: 'assistant', content: answer.content, toolCalls: calls });
        // Each call is its own: they run together, and a failure is that call's result.
        const results = await Promise.all(calls.map((call) => toolCall(ctx, tools, call, signal)));
        signal.throwIfAborted();
        toolCalls += calls.length;
        // A tool may echo a credential it was sent with (an MCP server's whoami): the model, often
        // a third party, gets the result masked as the run record shows it.
        calls.forEach((call, index) => messages.push({ role: 'tool', toolCallId: call.id, content: ctx.mask(results[index]) }));
        continue;
      }
      let json: unknown;
      if (p.outputSchema) {
        const parsed = parseJson(answer.content);
        const problems = parsed.ok ? argumentsProblem(p.outputSchema, parsed.value) : 'the answer is not JSON';
        if (problems) {
          if (schemaRetried || iteration === p.maxIterations) {
            throw new NodeUpstreamError(`The agent's answer does not match outputSchema: ${problems}`, {
              retryable: false,
              details: { parameter: 'outputSchema', answer: answer.content.slice(0, 1000) },
            });
          }
          schemaRetried = true;
          messages.push({ role: 'assistant', content: answer.content });
          messages.push({
            role: 'user',
            content: `Your answer does not match the required JSON Schema (${problems}). Answer again with only JSON that matches it.`,
          });
          continue;
        }
        json = parsed.ok ? parsed.value : undefined;
      }
      if (p.sessionKey) {
        await ctx.memory.append(
          p.sessionKey,
          [
            { role: 'user', content: p.message },
            { role: 'assistant', content: answer.content },
          ],
          { window: p.memoryWindow, ttlMs: p.memoryTtlSeconds * 1000 },
        );
      }
      return { answer: answer.content, ...(p.outputSchema ? { json } : {}), model: answer.model, iterations: iteration, toolCalls, usage };
    }
    throw new NodeUpstreamError(`The agent made its ${p.maxIterations} model calls (maxIterations) without a final answer`, {
      retryable: false,
      details: { parameter: 'maxIterations', toolCalls },
    });
  } catch (error) {
    throw budget.aborted && !ctx.signal.aborted ? overBudget() : error;
  } finally {
    await Promise.all(sessions.map((session) => session.close()));
  }
}

/** One model call, recorded as a sub-step: what was new since the last call, and what the model said. */
async function modelCall(
  ctx: NodeContext<AiAgentParameters>,
  messages: ChatMessage[],
  fresh: ChatMessage[],
  tools: Map<string, AgentTool>,
  signal: AbortSignal,
): Promise<ChatResponse> {
  const p = ctx.params;
  const startedAt = new Date();
  const began = performance.now();
  const step = { kind: 'model' as const, name: p.model ?? 'default', startedAt: startedAt.toISOString(), arguments: { messages: fresh } };
  try {
    const answer = await ctx.models.chat(
      {
        model: p.model,
        messages: [...messages],
        temperature: p.temperature,
        maxTokens: p.maxTokens,
        ...(tools.size ? { tools: [...tools.values()].map((tool) => tool.spec) } : {}),
        ...(p.endpoint ? { endpoint: { url: p.endpoint, credential: p.credential } } : {}),
        onToken: (text) => ctx.progress.token(text),
      },
      signal,
    );
    ctx.progress.subStep({
      ...step,
      name: answer.model,
      durationMs: performance.now() - began,
      ...(answer.usage ? { tokens: { prompt: answer.usage.promptTokens, completion: answer.usage.completionTokens } } : {}),
      result: {
        content: answer.content,
        ...(answer.toolCalls?.length
          ? { toolCalls: answer.toolCalls.map(({ name, arguments: args }) => ({ name, arguments: args })) }
          : {}),
      },
    });
    return answer;
  } catch (error) {
    ctx.progress.subStep({ ...step, durationMs: performance.now() - began, error: error instanceof Error ? error.message : String(error) });
    throw error;
  }
}

/** One tool call, recorded as a sub-step; resolves with what the model reads (a failure included), never rejects but for a stop. */
async function toolCall(
  ctx: NodeContext<AiAgentParameters>,
  tools: Map<string, AgentTool>,
  call: ChatToolCall,
  signal: AbortSignal,
): Promise<string> {
  const startedAt = new Date();
  const began = performance.now();
  const parsed = parseJson(call.arguments || '{}');
  const args =
    parsed.ok && typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value)
      ? (parsed.value as Record<string, unknown>)
      : undefined;
  const record = (outcome: { result?: unknown; error?: string }) =>
    ctx.progress.subStep({
      kind: 'tool',
      name: call.name,
      startedAt: startedAt.toISOString(),
      durationMs: performance.now() - began,
      arguments: args ?? call.arguments,
      ...outcome,
    });
  const failed = (message: string) => {
    record({ error: message });
    return JSON.stringify({ error: message });
  };
  const tool = tools.get(call.name);
  if (!tool) return failed(`There is no tool named ${call.name}; the tools are: ${[...tools.keys()].join(', ') || 'none'}`);
  if (!args) return failed('The arguments are not a JSON object');
  let problems: string | null;
  try {
    problems = argumentsProblem(tool.spec.parameters, args);
  } catch (error) {
    return failed(`The tool's input schema cannot be used: ${(error as Error).message}`);
  }
  if (problems) return failed(`Invalid arguments: ${problems}`);
  try {
    const result = await tool.run(args, signal);
    record({ result });
    const text = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    return text.length > MAX_TOOL_RESULT_CHARS
      ? `${text.slice(0, MAX_TOOL_RESULT_CHARS)}... (cut at ${MAX_TOOL_RESULT_CHARS} characters)`
      : text;
  } catch (error) {
    // Stopping (cancel, the node's time) is not the tool's answer: the node stops.
    if (signal.aborted) throw signal.reason;
    if (!(error instanceof ToolFailure) && !isNodeError(error))
      return failed(`The tool failed: ${error instanceof Error ? error.message : String(error)}`);
    return failed(error.message);
  }
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const unfenced = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, '$1');
  try {
    return { ok: true, value: JSON.parse(unfenced) };
  } catch {
    return { ok: false };
  }
}
