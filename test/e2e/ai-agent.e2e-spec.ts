import { RunEvents, RunProgressEvent } from '../../src/runs/run-events';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { lastUserText, ScriptedAgentLlm, toolResults } from '../utils/scripted-agent-llm';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';
import { openConsoleBrowser } from '../utils/console-browser';
import { TestMcpServer } from '../utils/test-mcp-server';
import { waitForRun } from '../utils/workflows-fixtures';
import { addNotes, createCollection, waitForFile } from './collections-files.helpers';

/**
 * The ai-agent node over real HTTP, against a scripted OpenAI-compatible model on 127.0.0.1 (it
 * streams) with deterministic tool-call scripts: search then answer with citations, call a
 * workflow, call an outside MCP server, a tool error handed back, the iteration limit, memory.
 * With LLM_TEST_URL (LLM_TEST_MODEL, LLM_TEST_KEY) set, the same workflows run against that real
 * endpoint too, checked for their shape only.
 */
const MCP_TOKEN = 'agent-mcp-secret-token-4567';
const LLM_KEY = 'sk-agent-e2e-key-0123';

describe('ai-agent node against a scripted model', () => {
  let t: TestApp;
  let llm: ScriptedAgentLlm;
  let mcp: TestMcpServer;
  let embeddings: FakeEmbeddingsServer;
  let notes: string;
  let credentialId: string;
  let toolWorkflowId: string;
  const progress: { runId: string; event: RunProgressEvent }[] = [];
  let searchRunId: string;

  beforeAll(async () => {
    llm = await ScriptedAgentLlm.start({ apiKey: LLM_KEY });
    mcp = await TestMcpServer.start({ token: MCP_TOKEN });
    embeddings = await FakeEmbeddingsServer.start();
    t = await startTestApp({
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
      EMBEDDINGS_URL: embeddings.url,
      LLM_URL: `${llm.url}/v1`,
      LLM_API_KEY: LLM_KEY,
      LLM_MODEL: 'scripted-mini',
    });
    const events = t.app.get(RunEvents, { strict: false });
    const emit = events.progress.bind(events);
    events.progress = (runId, event) => {
      progress.push({ runId, event });
      emit(runId, event);
    };
    notes = await createCollection(t, 'River notes');
    for (const id of (await addNotes(t, notes, 3)).keys()) expect((await waitForFile(t, notes, id, ['indexed'])).status).toBe('indexed');
    const created = await t.request('POST', '/api/v1/credentials', {
      body: { name: 'outside MCP', type: 'bearer', secrets: { token: MCP_TOKEN } },
    });
    expect(created.status).toBe(201);
    credentialId = created.body.id;
    const tool = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'order lookup',
        definition: {
          nodes: [
            {
              id: 'ask',
              type: 'mcp-trigger',
              parameters: {
                toolName: 'lookup_order',
                description: 'Finds an order by id',
                inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
              },
            },
            { id: 'found', type: 'set', parameters: { fields: { status: 'shipped' } } },
          ],
          edges: [{ from: 'ask', to: 'found' }],
        },
      },
    });
    expect(tool.status).toBe(201);
    toolWorkflowId = tool.body.id;
    expect((await t.request('POST', `/api/v1/workflows/${toolWorkflowId}/publish`)).status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await llm?.close();
    await mcp?.close();
    await embeddings?.close();
  });

  const agentWorkflow = async (parameters: Record<string, unknown>, parameterMode: Record<string, string> = {}) => {
    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        {
          id: 'agent',
          type: 'ai-agent',
          parameters: { message: '${input.question}', systemPrompt: 'You answer from the notes and cite them.', ...parameters },
          parameterMode,
        },
      ],
      edges: [{ from: 'trigger', to: 'agent' }],
    };
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'agent', definition } });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const start = async (workflowId: string, input: unknown) => {
    const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { runType: 'test', input } });
    expect(started.status).toBe(202);
    return waitForRun(t.request, started.body.runId, { timeoutMs: 60_000 });
  };
  const runAgent = async (parameters: Record<string, unknown>, input: unknown = { question: 'Where did the heron cross?' }) =>
    start(await agentWorkflow(parameters), input);
  const agentStep = (record: any) => record.steps.find((s: any) => s.nodeId === 'agent');

  it('searches the collection, then answers citing the files; the record shows each call as a sub-step', async () => {
    llm.script = (request, turn) => {
      if (turn === 0) return { toolCalls: [{ name: 'search_collections', arguments: { query: lastUserText(request) } }] };
      const [hits] = toolResults(request) as { fileName: string; fileId: string; passage: string }[][];
      return { content: `The heron crossed the river [${hits[0].fileName}] (${hits.length} passages)` };
    };
    const record = await runAgent({ collections: [notes], searchTopK: 2 });
    expect(record.status).toBe('succeeded');
    searchRunId = record.id;
    const step = agentStep(record);
    expect(step.output).toMatchObject({
      answer: expect.stringMatching(/^The heron crossed the river \[note-0\d\.txt\] \(2 passages\)$/),
      model: 'scripted-mini',
      iterations: 2,
      toolCalls: 1,
    });
    expect(step.subSteps.map((s: any) => [s.kind, s.name])).toEqual([
      ['model', 'scripted-mini'],
      ['tool', 'search_collections'],
      ['model', 'scripted-mini'],
    ]);
    const [first, search] = step.subSteps;
    expect(first).toMatchObject({
      tokens: { prompt: expect.any(Number), completion: expect.any(Number) },
      durationMs: expect.any(Number),
      startedAt: expect.any(String),
    });
    expect(first.result.toolCalls).toEqual([
      { name: 'search_collections', arguments: JSON.stringify({ query: 'Where did the heron cross?' }) },
    ]);
    expect(search.arguments).toEqual({ query: 'Where did the heron cross?' });
    expect(search.result).toHaveLength(2);
    for (const hit of search.result) expect(Object.keys(hit).sort()).toEqual(['collectionId', 'distance', 'fileId', 'fileName', 'passage']);
    // The model got the tools' schemas, the key, and streamed its answer: tokens reached RunEvents as they came.
    const asked = llm.requests.filter((r) => lastUserText(r) === 'Where did the heron cross?');
    expect(asked[0].headers.authorization).toBe(`Bearer ${LLM_KEY}`);
    expect(asked[0].body).toMatchObject({ stream: true, tools: [{ type: 'function', function: { name: 'search_collections' } }] });
    const mine = progress.filter((p) => p.runId === record.id);
    expect(
      mine
        .filter((p) => p.event.type === 'token')
        .map((p) => (p.event as { text: string }).text)
        .join(''),
    ).toBe(step.output.answer);
    expect(mine.filter((p) => p.event.type === 'substep').map((p) => (p.event as any).subStep.kind)).toEqual(['model', 'tool', 'model']);
  });

  it('passes the filter the model gives its search tool: every passage it gets is of a file the filter keeps', async () => {
    const filter = { field: 'name', in: ['note-01.txt'] };
    llm.script = (request, turn) => {
      if (turn === 0) {
        const tool = request.body.tools?.find((candidate) => candidate.function.name === 'search_collections');
        expect((tool?.function.parameters as any).properties.filter).toMatchObject({ type: 'object' });
        return { toolCalls: [{ name: 'search_collections', arguments: { query: lastUserText(request), filter } }] };
      }
      return { content: 'done' };
    };
    const record = await runAgent({ collections: [notes], searchTopK: 5 });
    expect(record.status).toBe('succeeded');
    const search = agentStep(record).subSteps.find((s: any) => s.kind === 'tool');
    expect(search.arguments).toEqual({ query: 'Where did the heron cross?', filter });
    expect(search.result.length).toBeGreaterThan(0);
    // Unfiltered, the search returns all three notes.
    expect(search.result.map((hit: any) => hit.fileName)).toEqual(['note-01.txt']);
  });

  it("shows the calls in the console's run timeline", async () => {
    const { browser, page, pageErrors } = await openConsoleBrowser({ viewport: { width: 1280, height: 860 } });
    try {
      await page.goto(`${t.url}/console`);
      await page.getByLabel('API key').fill(BOOTSTRAP_KEY);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await page.goto(`${t.url}/console/runs/${searchRunId}`);
      const summary = page.getByText('Model and tool calls (2 model, 1 tool)');
      await summary.waitFor({ timeout: 30_000 });
      await summary.click();
      const calls = page.getByRole('list', { name: 'Calls of agent' }).getByRole('listitem');
      expect(await calls.count()).toBe(3);
      expect(await calls.nth(1).textContent()).toContain('search_collections');
      expect(pageErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 120_000);

  it('runs a published workflow as a tool, its mcp-trigger schema being the tool schema', async () => {
    llm.script = (request, turn) => {
      if (turn === 0) {
        const tool = request.body.tools?.find((candidate) => candidate.function.name === 'lookup_order');
        expect(tool?.function.parameters).toEqual({ type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] });
        return { toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'A-17' } }] };
      }
      return { content: `Order A-17: ${JSON.stringify(toolResults(request)[0])}` };
    };
    const record = await runAgent({ workflows: [toolWorkflowId] }, { question: 'Where is order A-17?' });
    expect(record.status).toBe('succeeded');
    const step = agentStep(record);
    // The workflow's output, as its run record has it (its set node ran once per item).
    expect(step.output.answer).toBe('Order A-17: [{"orderId":"A-17","status":"shipped"}]');
    expect(step.subSteps[1]).toMatchObject({
      kind: 'tool',
      name: 'lookup_order',
      arguments: { orderId: 'A-17' },
      result: [{ orderId: 'A-17', status: 'shipped' }],
    });
    expect(record.children).toEqual([
      expect.objectContaining({ parentNodeId: 'agent', workflowId: toolWorkflowId, trigger: 'sub-workflow', status: 'succeeded' }),
    ]);
  });

  it("calls an outside MCP server's tools in parallel with the credential, masked in the record", async () => {
    llm.script = (request, turn) => {
      if (turn === 0)
        return {
          toolCalls: [
            { name: 'add', arguments: { a: 2, b: 40 } },
            { name: 'whoami', arguments: {} },
          ],
        };
      const [sum, who] = toolResults(request) as [{ sum: number }, string];
      return { content: `sum ${sum.sum}; ${who}` };
    };
    const record = await runAgent(
      { mcpServers: [{ url: mcp.url, credential: credentialId, tools: ['add', 'whoami'] }] },
      { question: 'Add 2 and 40' },
    );
    expect(record.status).toBe('succeeded');
    const step = agentStep(record);
    const toolsOffered = llm.requests.filter((r) => lastUserText(r) === 'Add 2 and 40')[0].body.tools?.map((tool) => tool.function.name);
    expect(toolsOffered).toEqual(['add', 'whoami']);
    expect(
      step.subSteps
        .filter((s: any) => s.kind === 'tool')
        .map((s: any) => s.name)
        .sort(),
    ).toEqual(['add', 'whoami']);
    expect(step.subSteps.find((s: any) => s.name === 'add').result).toEqual({ sum: 42 });
    expect(mcp.requests.filter((r) => r.method === 'POST').every((r) => r.headers.authorization === `Bearer ${MCP_TOKEN}`)).toBe(true);
    expect(step.output.answer).toMatch(/^sum 42; authorization: .*\[REDACTED\]$/);
    expect(JSON.stringify(record)).not.toContain(MCP_TOKEN);
    expect(JSON.stringify(progress.filter((p) => p.runId === record.id))).not.toContain(MCP_TOKEN);
  });

  it("hands a tool's failure back to the model as the tool result: the run goes on", async () => {
    llm.script = (request, turn) =>
      turn === 0
        ? { toolCalls: [{ name: 'fail', arguments: { why: 'no stock' } }] }
        : { content: `I could not: ${JSON.stringify(toolResults(request)[0])}` };
    const record = await runAgent({ mcpServers: [{ url: mcp.url, credential: credentialId }] }, { question: 'Order more' });
    expect(record.status).toBe('succeeded');
    const step = agentStep(record);
    expect(step.output.answer).toBe('I could not: {"error":"failed on purpose: no stock"}');
    expect(step.subSteps[1]).toMatchObject({ kind: 'tool', name: 'fail', error: 'failed on purpose: no stock' });
  });

  it('stops at maxIterations with a clear node error, the calls so far in the record', async () => {
    llm.script = (_request, turn) => ({ toolCalls: [{ name: 'echo', arguments: { text: `round ${turn}` } }] });
    const record = await runAgent(
      { mcpServers: [{ url: mcp.url, credential: credentialId }], maxIterations: 3 },
      { question: 'Loop forever' },
    );
    expect(record.status).toBe('failed');
    const step = agentStep(record);
    expect(step.error.message).toBe('The agent made its 3 model calls (maxIterations) without a final answer');
    expect(step.subSteps.map((s: any) => s.kind)).toEqual(['model', 'tool', 'model', 'tool', 'model', 'tool']);
  });

  it("refuses an MCP server's credential its saver may not use, and servers given by an expression", async () => {
    const mallory = await t.createUser('mallory');
    const definition = (agent: Record<string, unknown>) => ({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'agent', type: 'ai-agent', ...agent },
      ],
      edges: [{ from: 'trigger', to: 'agent' }],
    });
    const borrowed = await t.request('POST', '/api/v1/workflows', {
      key: mallory.key,
      body: {
        name: 'borrow',
        definition: definition({
          parameters: { message: 'hi', mcpServers: [{ url: 'https://evil.example/mcp', credential: credentialId }] },
        }),
      },
    });
    expect(borrowed.status).toBe(400);
    expect(borrowed.body.details.fields).toContainEqual(
      expect.objectContaining({
        field: 'nodes[1].parameters.mcpServers[0].credential',
        reason: expect.stringContaining('you may only choose a credential you can use'),
      }),
    );
    const computed = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'computed',
        definition: definition({ parameters: { message: 'hi', mcpServers: 'input.servers' }, parameterMode: { mcpServers: 'expression' } }),
      },
    });
    expect(computed.status).toBe(400);
    expect(computed.body.details.fields).toContainEqual(
      expect.objectContaining({ field: 'nodes[1].parameterMode.mcpServers', reason: expect.stringContaining('must be a fixed value') }),
    );
  });

  it('remembers the conversation across two runs with the same sessionKey', async () => {
    llm.script = (request) => ({
      content: `Answer to "${lastUserText(request)}" after ${request.body.messages.length - 2} earlier messages`,
    });
    const parameters = { sessionKey: 'input.sessionId', memoryWindow: 10 };
    const workflowId = await agentWorkflow(parameters, { sessionKey: 'expression' });
    const first = await start(workflowId, { question: 'My name is Ada.', sessionId: 'chat-1' });
    expect(agentStep(first).output.answer).toBe('Answer to "My name is Ada." after 0 earlier messages');
    const second = await start(workflowId, { question: 'What is my name?', sessionId: 'chat-1' });
    expect(agentStep(second).output.answer).toBe('Answer to "What is my name?" after 2 earlier messages');
    const asked = llm.requests.find((r) => lastUserText(r) === 'What is my name?')!;
    expect(asked.body.messages.map((m) => m.content)).toEqual([
      'You answer from the notes and cite them.',
      'My name is Ada.',
      'Answer to "My name is Ada." after 0 earlier messages',
      'What is my name?',
    ]);
    // Another session of the workflow starts afresh, and so does another workflow with the same key.
    const otherSession = await start(workflowId, { question: 'Who am I?', sessionId: 'chat-2' });
    expect(agentStep(otherSession).output.answer).toBe('Answer to "Who am I?" after 0 earlier messages');
    const otherWorkflow = await start(await agentWorkflow(parameters, { sessionKey: 'expression' }), {
      question: 'Who am I?',
      sessionId: 'chat-1',
    });
    expect(agentStep(otherWorkflow).output.answer).toBe('Answer to "Who am I?" after 0 earlier messages');
  });
});

const realEndpoint = process.env.LLM_TEST_URL;
(realEndpoint ? describe : describe.skip)('ai-agent node against the real endpoint in LLM_TEST_URL', () => {
  let t: TestApp;
  let mcp: TestMcpServer;
  let embeddings: FakeEmbeddingsServer;
  let notes: string;
  let credential: string | undefined;

  beforeAll(async () => {
    mcp = await TestMcpServer.start();
    embeddings = await FakeEmbeddingsServer.start();
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1', EMBEDDINGS_URL: embeddings.url });
    notes = await createCollection(t, 'River notes');
    for (const id of (await addNotes(t, notes, 3)).keys()) await waitForFile(t, notes, id, ['indexed']);
    if (process.env.LLM_TEST_KEY) {
      const created = await t.request('POST', '/api/v1/credentials', {
        body: { name: 'model', type: 'bearer', secrets: { token: process.env.LLM_TEST_KEY } },
      });
      credential = created.body.id;
    }
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await mcp?.close();
    await embeddings?.close();
  });

  const runAgent = async (parameters: Record<string, unknown>, input: unknown) => {
    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        {
          id: 'agent',
          type: 'ai-agent',
          parameters: {
            message: '${input.question}',
            endpoint: realEndpoint,
            model: process.env.LLM_TEST_MODEL ?? 'gpt-4o-mini',
            ...(credential ? { credential } : {}),
            temperature: 0,
            ...parameters,
          },
        },
      ],
      edges: [{ from: 'trigger', to: 'agent' }],
    };
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'agent', definition } });
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test', input } });
    return waitForRun(t.request, started.body.runId, { timeoutMs: 180_000 });
  };

  it('answers with the collection and an outside MCP server as tools (shape only)', async () => {
    const record = await runAgent(
      {
        collections: [notes],
        mcpServers: [{ url: mcp.url, tools: ['add'] }],
        systemPrompt: 'Use the tools: search the notes, and add numbers with the add tool.',
      },
      { question: 'Where did the heron cross the river? Also, what is 2 + 40?' },
    );
    expect(record.status).toBe('succeeded');
    const step = record.steps.find((s: any) => s.nodeId === 'agent');
    expect(step.output).toMatchObject({ answer: expect.any(String), iterations: expect.any(Number), toolCalls: expect.any(Number) });
    expect(step.subSteps.length).toBeGreaterThanOrEqual(1);
    for (const sub of step.subSteps) expect(['model', 'tool']).toContain(sub.kind);
  }, 240_000);

  it('remembers a session across two runs (shape only)', async () => {
    await runAgent({ sessionKey: 'real-1' }, { question: 'Remember the word: pelican.' });
    const record = await runAgent({ sessionKey: 'real-1' }, { question: 'Which word did I ask you to remember?' });
    expect(record.status).toBe('succeeded');
    expect(typeof record.steps.find((s: any) => s.nodeId === 'agent').output.answer).toBe('string');
  }, 240_000);
});
