import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { NodeUpstreamError, WorkflowRunResult, WorkflowsFacade } from 'workflow-collection-service/sdk';
import { inputContext, itemContext } from 'workflow-collection-service/sdk/testing';
import executeWorkflow, { ExecuteWorkflowParameters } from './index';

const params = (values: Partial<ExecuteWorkflowParameters>) => Object.assign(new ExecuteWorkflowParameters(), values);

function workflows(result: Omit<WorkflowRunResult, 'runId'>) {
  const calls: { workflowId: string; input: unknown; runType?: string }[] = [];
  const facade: WorkflowsFacade = {
    async execute(workflowId, input, options) {
      calls.push({ workflowId, input, runType: options?.runType });
      return { runId: 'run_child', ...result };
    },
    describeTool: () => Promise.reject(new Error('not used')),
  };
  return { facade, calls };
}

describe('execute-workflow node', () => {
  it("runs the child with this node's input and outputs the child's output", async () => {
    const { facade, calls } = workflows({ status: 'succeeded', output: { total: 3 } });
    const out = await executeWorkflow.execute(inputContext(params({ workflowId: 'wfl_child' }), { input: [1, 2], workflows: facade }));
    expect(out).toEqual({ total: 3 });
    expect(calls).toEqual([{ workflowId: 'wfl_child', input: [1, 2], runType: 'production' }]);
  });

  it('passes the input parameter instead when given, per item, and the draft for a test run', async () => {
    const { facade, calls } = workflows({ status: 'succeeded', output: null });
    await executeWorkflow.execute(
      itemContext(params({ workflowId: 'wfl_child', runType: 'test', input: { id: 9 } }), { item: 'x', workflows: facade }),
    );
    expect(calls).toEqual([{ workflowId: 'wfl_child', input: { id: 9 }, runType: 'test' }]);
  });

  it("fails with the child's error, not to be retried, when the child fails", async () => {
    const { facade } = workflows({ status: 'failed', output: undefined, error: { code: 'NODE_FAILED', message: 'boom' } });
    const failure = executeWorkflow.execute(inputContext(params({ workflowId: 'wfl_child' }), { workflows: facade }));
    await expect(failure).rejects.toBeInstanceOf(NodeUpstreamError);
    await expect(failure).rejects.toMatchObject({ retryable: false, message: expect.stringContaining('boom') });
  });

  it('declares that running it twice would start a second child', () => {
    expect(executeWorkflow.idempotent).toBe(false);
  });

  it('refuses a missing workflow id and an unknown run type', () => {
    expect(
      validateSync(plainToInstance(ExecuteWorkflowParameters, { runType: 'staging' }))
        .map((e) => e.property)
        .sort(),
    ).toEqual(['runType', 'workflowId']);
  });
});
