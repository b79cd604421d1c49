/**
 * The AI agent's own cost, against a scripted OpenAI-compatible model (streaming, in this process)
 * and an outside MCP server (the SDK's, in this process), the app in its own process (APP_ROLE=all,
 * embedded queue, SQLite):
 *
 * 1. Agent overhead per tool call, the model's time excluded: the same agent runs a script of 2
 *    and of 32 sequential tool calls (one per model turn). For each run, its step's time less the
 *    model calls' and tool calls' wall times (from its sub-steps) is the agent's own; the p50 of
 *    the long script's less the p50 of the short one's, over the 30 extra calls, is the cost each
 *    tool call adds (a model turn and a tool call: building the request, reading the streamed
 *    answer's tool calls, checking the arguments, recording and reporting two sub-steps) (connecting to the MCP server and listing its tools, the same in both, cancel
 *    out). Target: p50 <= 2 ms. Baseline: the short script's own time per run.
 * 2. 100 agent runs started at once (one search-free MCP tool call and an answer each), all
 *    finished: count and errors. Target: 100 succeeded, 0 errors.
 */
import { ScriptedAgentLlm } from '../utils/scripted-agent-llm';
import { TestMcpServer } from '../utils/test-mcp-server';
import { BENCH_KEY, call, percentile, report, startApp } from './lib/bench-kit';

const PAIRS = Number(process.env.BENCH_PAIRS ?? 30);
const SHORT = 2;
const LONG = 32;
const CONCURRENT = 100;

const agentDefinition = (mcpUrl: string) => ({
  nodes: [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    {
      id: 'agent',
      type: 'ai-agent',
      parameters: { message: '${input.question}', mcpServers: [{ url: mcpUrl, tools: ['echo'] }], maxIterations: 50 },
    },
  ],
  edges: [{ from: 'trigger', to: 'agent' }],
});

async function waitFor(appUrl: string, runId: string): Promise<any> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const run = await call(appUrl, 'GET', `/api/v1/runs/${runId}`);
    if (['succeeded', 'failed', 'canceled'].includes(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not finish`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The agent's own time in a run: its step less its model and tool calls (sequential here, so their durations add up). */
function ownTime(run: any): { own: number; tools: number } {
  const step = run.steps.find((s: any) => s.nodeId === 'agent');
  if (run.status !== 'succeeded' || !step?.subSteps) throw new Error(`run ${run.id} ${run.status}: ${JSON.stringify(run.error)}`);
  const spent = step.subSteps.reduce((sum: number, s: any) => sum + s.durationMs, 0);
  return { own: step.durationMs - spent, tools: step.subSteps.filter((s: any) => s.kind === 'tool').length };
}

async function main(): Promise<void> {
  const llm = await ScriptedAgentLlm.start({ keepRequests: false });
  const mcp = await TestMcpServer.start();
  // "calls N": N turns of one echo call each, then the answer.
  llm.script = (request, turn) => {
    const question = request.body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    const calls = Number(/calls (\d+)/.exec(question)?.[1] ?? 1);
    return turn < calls
      ? { toolCalls: [{ name: 'echo', arguments: { text: `round ${turn}` } }] }
      : { content: `done after ${calls} calls` };
  };
  const app = await startApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1', LLM_URL: `${llm.url}/v1`, LLM_MODEL: 'scripted', JOB_CONCURRENCY: '16' });
  try {
    const workflow = await call(app.url, 'POST', '/api/v1/workflows', { name: 'agent bench', definition: agentDefinition(mcp.url) });
    await call(app.url, 'POST', `/api/v1/workflows/${workflow.id}/publish`);
    const runOnce = async (calls: number) =>
      waitFor(
        app.url,
        (await call(app.url, 'POST', `/api/v1/workflows/${workflow.id}/runs`, { input: { question: `calls ${calls}` } })).runId,
      );

    for (let i = 0; i < 5; i++) await runOnce(LONG); // warm-up: plans, isolates, connections
    const short: number[] = [];
    const long: number[] = [];
    for (let i = 0; i < PAIRS; i++) {
      const a = ownTime(await runOnce(SHORT));
      const b = ownTime(await runOnce(LONG));
      if (a.tools !== SHORT || b.tools !== LONG) throw new Error(`expected ${SHORT} and ${LONG} tool calls, got ${a.tools} and ${b.tools}`);
      short.push(a.own);
      long.push(b.own);
    }
    short.sort((x, y) => x - y);
    long.sort((x, y) => x - y);
    const perCall = (percentile(long, 50) - percentile(short, 50)) / (LONG - SHORT);
    report({
      bench: 'ai-agent',
      metric: 'agent overhead per tool call, model and tool time excluded (p50)',
      value: perCall,
      unit: 'ms',
      baseline: percentile(short, 50),
      ratio: null,
      target: '<= 2 ms',
    });
    report({
      bench: 'ai-agent',
      metric: `agent own time per run with ${LONG} tool calls (p50; p99 ${percentile(long, 99).toFixed(1)} ms)`,
      value: percentile(long, 50),
      unit: 'ms',
      baseline: percentile(short, 50),
      ratio: percentile(long, 50) / Math.max(percentile(short, 50), 0.001),
      target: 'informational',
    });

    const started = performance.now();
    const accepted = await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        for (;;) {
          const res = await fetch(`${app.url}/api/v1/workflows/${workflow.id}/runs`, {
            method: 'POST',
            headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' },
            body: JSON.stringify({ input: { question: 'calls 1' } }),
          });
          const body = (await res.json()) as { runId?: string };
          if (res.status === 202 && body.runId) return body.runId;
          if (res.status !== 429 && res.status !== 503) throw new Error(`start: ${res.status} ${JSON.stringify(body)}`);
          await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
        }
      }),
    );
    const finished = await Promise.all(accepted.map((runId) => waitFor(app.url, runId)));
    const seconds = (performance.now() - started) / 1000;
    const succeeded = finished.filter((run) => run.status === 'succeeded' && run.output?.answer === 'done after 1 calls').length;
    report({
      bench: 'ai-agent',
      metric: `concurrent agent runs succeeded of ${CONCURRENT} (errors ${CONCURRENT - succeeded}, all done in ${seconds.toFixed(2)} s)`,
      value: succeeded,
      unit: 'runs',
      baseline: CONCURRENT,
      ratio: succeeded / CONCURRENT,
      target: `${CONCURRENT} succeeded, 0 errors`,
    });
  } finally {
    await app.stop();
    await llm.close();
    await mcp.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
