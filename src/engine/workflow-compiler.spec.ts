import httpRequest from '../../plugins/http-request';
import listFiles from '../../plugins/list-files';
import scheduleTrigger from '../../plugins/schedule-trigger';
import webhookTrigger from '../../plugins/webhook-trigger';
import { AppError } from '../common/app-error';
import { NodeRegistry } from './node-registry';
import { registerDefinition } from './plugin-loader';
import { CompileOptions, compileWorkflow, DefinitionProblem } from './workflow-compiler';
import { WorkflowDefinition, WorkflowNodeSpec } from '../domain/workflow-definition.model';

const registry = new NodeRegistry([
  registerDefinition(webhookTrigger, 'webhook-trigger'),
  registerDefinition(httpRequest, 'http-request'),
  registerDefinition(listFiles, 'list-files'),
  registerDefinition(scheduleTrigger, 'schedule-trigger'),
]);

const trigger: WorkflowNodeSpec = { id: 'trigger', type: 'webhook-trigger', parameters: {} };
const http = (
  id: string,
  parameters: Record<string, unknown> = { method: 'GET', url: 'https://example.com' },
  extra: Partial<WorkflowNodeSpec> = {},
): WorkflowNodeSpec => ({
  id,
  type: 'http-request',
  parameters,
  ...extra,
});

function problemsOf(definition: Partial<WorkflowDefinition>, options: CompileOptions = {}): DefinitionProblem[] {
  try {
    compileWorkflow({ nodes: [], edges: [], variables: [], ...definition }, registry, options);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return ((error as AppError).details as { fields: DefinitionProblem[] }).fields;
  }
  throw new Error('expected the definition to be refused');
}

describe('compileWorkflow', () => {
  it('orders nodes topologically, stable in definition order, and gives a join all its inputs', () => {
    const plan = compileWorkflow(
      {
        nodes: [http('join'), http('b'), trigger, http('a')],
        edges: [
          { from: 'trigger', to: 'a' },
          { from: 'trigger', to: 'b' },
          { from: 'a', to: 'join' },
          { from: 'b', to: 'join' },
        ],
        variables: [],
      },
      registry,
    );
    expect(plan.nodes.map((n) => n.id)).toEqual(['trigger', 'b', 'a', 'join']);
    expect(plan.nodes.map((n) => n.position)).toEqual([0, 1, 2, 3]);
    expect(plan.nodes[3].predecessors).toEqual(['a', 'b']);
    expect(plan.trigger.id).toBe('trigger');
  });

  it('validates fixed parameters once and skips expression ones until run time', () => {
    const plan = compileWorkflow(
      {
        nodes: [trigger, http('a', { method: 'POST', url: 'input.url' }, { parameterMode: { url: 'expression' } })],
        edges: [{ from: 'trigger', to: 'a' }],
        variables: [],
      },
      registry,
    );
    expect(plan.nodes[1].staticParams).toBeNull();
    expect(plan.nodes[1].expressions).toEqual([{ name: 'url', source: 'input.url', type: 'string' }]);
    expect(plan.nodes[0].staticParams).not.toBeNull();
  });

  it('reports an unknown node type and an unknown version with the node id', () => {
    const problems = problemsOf({
      nodes: [trigger, { id: 'x', type: 'no-such-node', parameters: {} }, http('y', undefined, { version: 9 })],
      edges: [
        { from: 'trigger', to: 'x' },
        { from: 'trigger', to: 'y' },
      ],
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          field: 'nodes[1].type',
          nodeId: 'x',
          reason: expect.stringContaining('unknown node type "no-such-node"'),
        }),
        expect.objectContaining({ field: 'nodes[2].version', nodeId: 'y', reason: expect.stringContaining('no version 9') }),
      ]),
    );
  });

  it('reports a cycle, naming its nodes', () => {
    const problems = problemsOf({
      nodes: [trigger, http('a'), http('b'), http('c')],
      edges: [
        { from: 'trigger', to: 'a' },
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
        { from: 'c', to: 'a' },
      ],
    });
    expect(problems).toEqual([
      expect.objectContaining({
        field: 'edges',
        reason: expect.stringMatching(/cycle: (a -> b -> c -> a|b -> c -> a -> b|c -> a -> b -> c)/),
      }),
    ]);
  });

  it('reports dangling edges, self loops and duplicates', () => {
    const problems = problemsOf({
      nodes: [trigger, http('a')],
      edges: [
        { from: 'trigger', to: 'a' },
        { from: 'trigger', to: 'a' },
        { from: 'a', to: 'ghost' },
        { from: 'a', to: 'a' },
      ],
    });
    expect(problems.map((p) => p.field)).toEqual(['edges[1]', 'edges[2].to', 'edges[3]']);
  });

  it('needs exactly one trigger, with no incoming edge, and every other node connected', () => {
    expect(problemsOf({ nodes: [http('a')] })).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'nodes', reason: expect.stringContaining('exactly one trigger') })]),
    );
    expect(problemsOf({ nodes: [trigger, { ...trigger, id: 't2' }], edges: [{ from: 'trigger', to: 't2' }] })).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ reason: expect.stringContaining('found 2') }),
        expect.objectContaining({ nodeId: 't2', reason: expect.stringContaining('cannot have incoming edges') }),
      ]),
    );
    expect(problemsOf({ nodes: [trigger, http('lonely')] })).toEqual([
      expect.objectContaining({ nodeId: 'lonely', reason: expect.stringContaining('not connected') }),
    ]);
  });

  it('reports bad fixed parameters per field, and modes of parameters the node does not have', () => {
    const problems = problemsOf({
      nodes: [
        trigger,
        http('a', { method: 'FETCH', url: 'https://x', extra: 1, responseType: 'xml' }),
        http('b', { method: 'GET', url: 'https://x' }, { parameterMode: { nope: 'expression' } }),
      ],
      edges: [
        { from: 'trigger', to: 'a' },
        { from: 'trigger', to: 'b' },
      ],
    });
    expect(problems.map((p) => [p.nodeId, p.field])).toEqual([
      ['a', 'nodes[1].parameters.extra'],
      ['a', 'nodes[1].parameters.method'],
      ['a', 'nodes[1].parameters.responseType'],
      ['b', 'nodes[2].parameterMode.nope'],
    ]);
  });

  it('lets every parameter be an expression', () => {
    const plan = compileWorkflow(
      {
        nodes: [
          trigger,
          http(
            'a',
            { method: 'input.method', url: 'input.url', responseType: '"text"' },
            { parameterMode: { method: 'expression', url: 'expression', responseType: 'expression' } },
          ),
        ],
        edges: [{ from: 'trigger', to: 'a' }],
        variables: [],
      },
      registry,
    );
    expect(plan.nodes[1].expressions.map((e) => [e.name, e.type])).toEqual([
      ['method', 'unknown'],
      ['url', 'string'],
      ['responseType', 'unknown'],
    ]);
  });

  it('renders a template parameter in fixed mode only when it has insertions', () => {
    const list = (instructions: string): WorkflowNodeSpec => ({
      id: 'list',
      type: 'list-files',
      parameters: { collectionId: 'col_1', instructions },
    });
    const compile = (instructions: string) =>
      compileWorkflow({ nodes: [trigger, list(instructions)], edges: [{ from: 'trigger', to: 'list' }], variables: [] }, registry).nodes[1];
    const plain = compile('Read the newest files first');
    expect(plain.expressions).toEqual([]);
    expect(plain.staticParams).toMatchObject({ instructions: 'Read the newest files first', offset: '0' });
    const template = compile('Read page ${item.page} of ${variables.total}');
    expect(template.expressions).toEqual([
      { name: 'instructions', source: 'Read page ${item.page} of ${variables.total}', type: 'string' },
    ]);
    expect(template.fixed).toEqual({ collectionId: 'col_1' });
    expect(template.staticParams).toBeNull();
  });

  describe('AI Decide', () => {
    const aiList = (
      parameters: Record<string, unknown>,
      parameterMode: Record<string, 'ai' | 'expression' | 'fixed'>,
    ): Partial<WorkflowDefinition> => ({
      nodes: [trigger, { id: 'list', type: 'list-files', parameters, parameterMode }],
      edges: [{ from: 'trigger', to: 'list' }],
    });

    it('is refused without a language model, naming the node and the parameter', () => {
      expect(problemsOf(aiList({ collectionId: 'col_1' }, { offset: 'ai' }))).toEqual([
        {
          field: 'nodes[1].parameterMode.offset',
          nodeId: 'list',
          reason: expect.stringMatching(
            /^node "list" sets parameter "offset" to AI Decide, but no language model is configured: set LLM_URL/,
          ),
        },
      ]);
    });

    it('defers a required parameter to the model, with its schema and the hint', () => {
      const plan = compileWorkflow(
        {
          nodes: [
            trigger,
            {
              id: 'list',
              type: 'list-files',
              parameters: { offset: 'the page after the last one read' },
              parameterMode: { collectionId: 'ai', offset: 'ai' },
            },
          ],
          edges: [{ from: 'trigger', to: 'list' }],
          variables: [],
        },
        registry,
        { aiDecide: true },
      );
      const list = plan.nodes[1];
      expect(list.staticParams).toBeNull();
      expect(list.fixed).toEqual({});
      expect(list.aiParameters).toEqual([
        {
          name: 'collectionId',
          hint: '',
          type: 'string',
          required: true,
          schema: expect.objectContaining({ type: 'string', minLength: 1 }),
        },
        {
          name: 'offset',
          hint: 'the page after the last one read',
          type: 'string',
          required: false,
          schema: expect.objectContaining({ pattern: '^\\d{1,9}$', default: '0' }),
        },
      ]);
    });

    it('takes only text as the hint', () => {
      expect(problemsOf(aiList({ collectionId: 'col_1', offset: 40 }, { offset: 'ai' }), { aiDecide: true })).toEqual([
        expect.objectContaining({ field: 'nodes[1].parameters.offset', reason: expect.stringContaining('optional hint for the model') }),
      ]);
    });
  });

  it('refuses duplicate node ids and an empty expression', () => {
    const problems = problemsOf({
      nodes: [trigger, http('a', { method: 'GET', url: '  ' }, { parameterMode: { url: 'expression' } }), http('a')],
      edges: [{ from: 'trigger', to: 'a' }],
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'nodes[2].id', reason: 'duplicate node id "a"' }),
        expect.objectContaining({ field: 'nodes[1].parameters.url', reason: 'an expression must be a non-empty string' }),
      ]),
    );
  });

  it('asks for fixed parameters on a trigger that starts runs by itself where a version is saved or published, not at run time', () => {
    const tick = (parameters: Record<string, unknown>, extra: Partial<WorkflowNodeSpec> = {}) => ({
      nodes: [{ id: 'tick', type: 'schedule-trigger', parameters, ...extra }],
      edges: [],
      variables: [],
    });
    const dynamic = tick({ cron: 'variables.cron', timezone: 'UTC' }, { parameterMode: { cron: 'expression' } });
    expect(compileWorkflow(dynamic, registry).trigger.staticParams).toBeNull();
    expect(problemsOf(dynamic, { fixedTriggerParameters: true })).toEqual([
      expect.objectContaining({
        field: 'nodes[0].parameters.cron',
        nodeId: 'tick',
        reason: expect.stringContaining('starts runs on a schedule'),
      }),
    ]);
    expect(
      problemsOf(tick({ cron: '', timezone: 'UTC' }, { parameterMode: { cron: 'ai' } }), { aiDecide: true, fixedTriggerParameters: true }),
    ).toEqual([expect.objectContaining({ field: 'nodes[0].parameterMode.cron', reason: expect.stringContaining('not AI Decide') })]);
    expect(
      compileWorkflow(tick({ cron: '*/5 * * * *', timezone: 'UTC' }), registry, { fixedTriggerParameters: true }).trigger.staticParams,
    ).toMatchObject({ cron: '*/5 * * * *' });
  });
});
