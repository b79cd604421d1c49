import type {
  ApprovalsFacade,
  CollectionsFacade,
  InputModeContext,
  ItemModeContext,
  LanguageModels,
  CodeSandbox,
  McpClients,
  NodeProgress,
  ConversationMemory,
  NodeHttpClient,
  NodeLogger,
  WorkflowsFacade,
} from './node-context';

/**
 * Builds the `ctx` a node's `execute` receives, for a plugin's own tests: what the test gives is
 * used, and any service the test did not stub fails loudly when the node calls it. A node is a
 * plain function; this is all it takes to call it.
 *
 *     const output = await myNode.execute(inputContext(params, { input: [1, 2] }));
 */
export function inputContext<P>(params: P, overrides: Partial<Omit<InputModeContext<P>, 'params' | 'runMode'>> = {}): InputModeContext<P> {
  return { ...common(), input: null, ...overrides, params, runMode: 'input' };
}

/** The same for run mode `item`: `item` and `itemIndex` instead of `input`. */
export function itemContext<P>(params: P, overrides: Partial<Omit<ItemModeContext<P>, 'params' | 'runMode'>> = {}): ItemModeContext<P> {
  return { ...common(), item: null, itemIndex: 0, ...overrides, params, runMode: 'item' };
}

const silent: NodeLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** Progress goes nowhere unless the test passes its own `progress` to look at it. */
const unobserved: NodeProgress = { subStep() {}, token() {} };

function notStubbed<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get: (_target, name) =>
      typeof name === 'symbol' || name === 'then'
        ? undefined
        : () => Promise.reject(new Error(`ctx.${what}.${name} was called but the test did not provide ctx.${what}`)),
  });
}

function common() {
  return {
    variables: {},
    nodes: {},
    inputs: [],
    collections: notStubbed<CollectionsFacade>('collections'),
    models: notStubbed<LanguageModels>('models'),
    sandbox: notStubbed<CodeSandbox>('sandbox'),
    workflows: notStubbed<WorkflowsFacade>('workflows'),
    // A link that names what it was made for, so a test can see it in the node's output.
    approvals: {
      link: (expiresAt: Date) => `http://approvals.test/approvals/run_test.node.${expiresAt.toISOString()}`,
    } satisfies ApprovalsFacade,
    http: notStubbed<NodeHttpClient>('http'),
    mcp: notStubbed<McpClients>('mcp'),
    progress: unobserved,
    memory: notStubbed<ConversationMemory>('memory'),
    logger: silent,
    mask: <T>(value: T) => value,
    signal: new AbortController().signal,
    runId: 'run_test',
    workflowId: 'wfl_test',
    nodeId: 'node',
  };
}
