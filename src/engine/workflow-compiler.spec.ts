import httpRequest from '../../plugins/http-request';
import webhookTrigger from '../../plugins/webhook-trigger';
import { AppError } from '../common/app-error';
import { NodeRegistry } from './node-registry';
import { registerDefinition } from './plugin-loader';
import { compileWorkflow, DefinitionProblem } from './workflow-compiler';
import { WorkflowDefinition, WorkflowNodeSpec } from './workflow-definition';

const registry = new NodeRegistry([registerDefinition(webhookTrigger, 'webhook-trigger'), registerDefinition(httpRequest, 'http-request')]);

const trigger: WorkflowNodeSpec = { id: 'trigger', type: 'webhook-trigger', parameters: {} };
const http = (id: string, parameters: Record<string, unknown> = { method: 'GET', url: 'https://example.com' }, extra: Partial<WorkflowNodeSpec> = {}): WorkflowNodeSpec => ({
  id,
  type: 'http-request',
  parameters,
  ...extra,
});

function problemsOf(definition: Partial<WorkflowDefinition>): DefinitionProblem[] {
  try {
    compileWorkflow({ nodes: [], edges: [], variables: [], ...definition }, registry);
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
      { nodes: [trigger, http('a', { method: 'POST', url: 'input.url' }, { parameterMode: { url: 'expression' } })], edges: [{ from: 'trigger', to: 'a' }], variables: [] },
      registry,
    );
    expect(plan.nodes[1].staticParams).toBeNull();
    expect(plan.nodes[1].expressions).toEqual([{ name: 'url', source: 'input.url', type: 'string' }]);
    expect(plan.nodes[0].staticParams).not.toBeNull();
  });

  it('reports an unknown node type and an unknown version with the node id', () => {
    const problems = problemsOf({ nodes: [trigger, { id: 'x', type: 'no-such-node', parameters: {} }, http('y', undefined, { version: 9 })], edges: [{ from: 'trigger', to: 'x' }, { from: 'trigger', to: 'y' }] });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'nodes[1].type', nodeId: 'x', reason: expect.stringContaining('unknown node type "no-such-node"') }),
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
    expect(problems).toEqual([expect.objectContaining({ field: 'edges', reason: expect.stringMatching(/cycle: (a -> b -> c -> a|b -> c -> a -> b|c -> a -> b -> c)/) })]);
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

  it('reports bad fixed parameters per field, and expression modes the node does not allow', () => {
    const problems = problemsOf({
      nodes: [
        trigger,
        http('a', { method: 'FETCH', url: 'https://x', extra: 1, responseType: 'xml' }),
        http('b', { method: 'GET', url: 'https://x' }, { parameterMode: { method: 'expression', nope: 'expression' } }),
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
      ['b', 'nodes[2].parameterMode.method'],
      ['b', 'nodes[2].parameterMode.nope'],
    ]);
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
});
