import httpRequest from '../../../plugins/http-request';
import ifNode from '../../../plugins/if';
import webhookTrigger from '../../../plugins/webhook-trigger';
import { AppError } from '../../common/app-error';
import { defineNode } from '../../sdk';
import { WorkflowEdge, WorkflowNodeSpec } from '../../domain/workflow-definition.model';
import { NodeRegistry } from '../node-registry';
import { registerDefinition } from '../plugin-loader';
import { compileWorkflow, DefinitionProblem } from '../workflow-compiler';

/** A node type with an output of its own named `error`. */
const validator = defineNode({
  type: 'validator',
  version: 1,
  displayName: 'Validator',
  description: 'Sends each item to ok or error',
  parameters: class {},
  defaultRunMode: 'item',
  outputs: ['ok', 'error'],
  execute: () => null,
});

const registry = new NodeRegistry([
  registerDefinition(webhookTrigger, 'webhook-trigger'),
  registerDefinition(httpRequest, 'http-request'),
  registerDefinition(ifNode, 'if'),
  registerDefinition(validator, 'validator'),
]);

const call = (
  settings: Partial<WorkflowNodeSpec>,
  parameters: Record<string, unknown> = { method: 'GET', url: 'https://example.com' },
): WorkflowNodeSpec => ({
  id: 'call',
  type: 'http-request',
  parameters,
  ...settings,
});

function compile(node: WorkflowNodeSpec, more: WorkflowNodeSpec[] = [], edges: WorkflowEdge[] = []) {
  return compileWorkflow(
    {
      nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }, node, ...more],
      edges: [{ from: 'trigger', to: node.id }, ...edges],
      variables: [],
    },
    registry,
  );
}

function problemsOf(node: WorkflowNodeSpec, more: WorkflowNodeSpec[] = [], edges: WorkflowEdge[] = []): DefinitionProblem[] {
  try {
    compile(node, more, edges);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return ((error as AppError).details as { fields: DefinitionProblem[] }).fields;
  }
  throw new Error('expected the definition to be refused');
}

const compiled = (node: WorkflowNodeSpec) => compile(node).byId.get(node.id)!;

describe('failure settings of a node', () => {
  it('tries once and stops by default', () => {
    expect(compiled(call({}))).toMatchObject({ onError: 'stop', tries: { maxTries: 1 } });
  });

  it('compiles retryOnFail with n8n defaults, and maxTries, waitBetweenTries and backoff when given', () => {
    expect(compiled(call({ retryOnFail: true })).tries).toEqual({ maxTries: 3, waitMs: 1000, backoff: 'fixed' });
    expect(compiled(call({ retryOnFail: true, maxTries: 5, waitBetweenTries: 0, backoff: 'exponential' })).tries).toEqual({
      maxTries: 5,
      waitMs: 0,
      backoff: 'exponential',
    });
    // The numbers stay as the builder left them, but only count with retryOnFail on.
    expect(compiled(call({ retryOnFail: false, maxTries: 4 })).tries.maxTries).toBe(1);
  });

  it('reads the older retry as exponential backoff, and accepts both spellings when they agree', () => {
    expect(compiled(call({ retry: { maxAttempts: 4, backoffMs: 200 } })).tries).toEqual({
      maxTries: 4,
      waitMs: 200,
      backoff: 'exponential',
    });
    const both = call({
      retry: { maxAttempts: 4, backoffMs: 200 },
      retryOnFail: true,
      maxTries: 4,
      waitBetweenTries: 200,
      backoff: 'exponential',
    });
    expect(compiled(both).tries).toEqual({ maxTries: 4, waitMs: 200, backoff: 'exponential' });
  });

  it('refuses the two retry spellings when they disagree, naming the node and the field', () => {
    expect(problemsOf(call({ retry: { maxAttempts: 3 }, retryOnFail: true, maxTries: 2, backoff: 'exponential' }))).toEqual([
      {
        field: 'nodes[1].maxTries',
        nodeId: 'call',
        reason: expect.stringMatching(/^2 contradicts retry.maxAttempts 3: retry is the older spelling/),
      },
    ]);
    expect(problemsOf(call({ retry: { maxAttempts: 3 }, retryOnFail: false }))).toEqual([
      expect.objectContaining({ field: 'nodes[1].retryOnFail', nodeId: 'call' }),
    ]);
    expect(problemsOf(call({ retry: { maxAttempts: 3, backoffMs: 10 }, retryOnFail: true, maxTries: 3, backoff: 'exponential' }))).toEqual([
      expect.objectContaining({ field: 'nodes[1].waitBetweenTries', reason: expect.stringContaining('contradicts retry.backoffMs 10') }),
    ]);
    expect(problemsOf(call({ retry: { maxAttempts: 3 }, retryOnFail: true }))).toEqual([
      expect.objectContaining({ field: 'nodes[1].backoff', reason: expect.stringContaining('"fixed" contradicts retry') }),
    ]);
  });

  it('takes continueOnError as the older spelling of onError, and refuses the two when they disagree', () => {
    expect(compiled(call({ continueOnError: true })).onError).toBe('continue');
    expect(compiled(call({ continueOnError: false })).onError).toBe('stop');
    expect(compiled(call({ continueOnError: true, onError: 'continue' })).onError).toBe('continue');
    expect(problemsOf(call({ continueOnError: true, onError: 'errorOutput' }))).toEqual([
      {
        field: 'nodes[1].onError',
        nodeId: 'call',
        reason: '"errorOutput" contradicts continueOnError: true, the older spelling of onError "continue": give one of them',
      },
    ]);
    expect(problemsOf(call({ continueOnError: false, onError: 'continue' }))).toEqual([
      expect.objectContaining({ field: 'nodes[1].onError', nodeId: 'call' }),
    ]);
  });

  it('adds an error output with onError errorOutput, which edges may take', () => {
    const plan = compile(
      call({ onError: 'errorOutput' }),
      [{ id: 'notify', type: 'http-request', parameters: { method: 'GET', url: 'https://example.com/alert' } }],
      [{ from: 'call', to: 'notify', output: 'error' }],
    );
    expect(plan.byId.get('call')!.outputs).toEqual(['main', 'error']);
    expect(plan.byId.get('call')!.linkedOutputs).toEqual(['error']);
    const routed = compile({ id: 'check', type: 'if', parameters: { condition: true }, onError: 'errorOutput' });
    expect(routed.byId.get('check')!.outputs).toEqual(['true', 'false', 'error']);
  });

  it('says how to get an error output when an edge asks for one the node does not have', () => {
    expect(
      problemsOf(
        call({}),
        [{ id: 'notify', type: 'if', parameters: { condition: true } }],
        [{ from: 'call', to: 'notify', output: 'error' }],
      ),
    ).toContainEqual({
      field: 'edges[1].output',
      nodeId: 'call',
      reason: 'node "call" has no output "error"; its outputs: main (onError "errorOutput" sends its failures to an output "error")',
    });
  });

  it('refuses errorOutput on a node with an output named error of its own', () => {
    expect(problemsOf({ id: 'check', type: 'validator', parameters: {}, onError: 'errorOutput' })).toEqual([
      expect.objectContaining({
        field: 'nodes[1].onError',
        nodeId: 'check',
        reason: expect.stringContaining('has an output named "error" of its own'),
      }),
    ]);
  });

  it('reports a failure setting problem beside the node parameter problems', () => {
    const problems = problemsOf(call({ continueOnError: true, onError: 'stop' }, { method: 'FETCH', url: 'https://example.com' }));
    expect(problems.map((p) => p.field).sort()).toEqual(['nodes[1].onError', 'nodes[1].parameters.method']);
  });
});
