import { CodeSandbox } from 'workflow-collection-service/sdk';
import { inputContext, itemContext } from 'workflow-collection-service/sdk/testing';
import code, { CodeParameters } from './index';

/** Records what the node hands the sandbox; the sandbox itself is tested with the engine. */
class RecordingSandbox implements CodeSandbox {
  readonly calls: Array<{ code: string; scope: Record<string, unknown>; about?: { nodeId?: string } }> = [];
  async run(source: string, scope: Record<string, unknown>, _signal: AbortSignal, about?: { nodeId?: string }): Promise<unknown> {
    this.calls.push({ code: source, scope, about });
    return { ran: true };
  }
}

describe('code node', () => {
  it('runs its code in the sandbox with input, variables and nodes in run mode input', async () => {
    const sandbox = new RecordingSandbox();
    const params = Object.assign(new CodeParameters(), { code: 'return input.length;' });
    const output = await code.execute(inputContext(params, { input: [1, 2], variables: { v: 1 }, nodes: { a: 1 }, sandbox }));
    expect(output).toEqual({ ran: true });
    expect(sandbox.calls).toEqual([
      {
        code: 'return input.length;',
        scope: { input: [1, 2], variables: { v: 1 }, nodes: { a: 1 } },
        about: { nodeId: expect.any(String) },
      },
    ]);
  });

  it('gives item and itemIndex in run mode item', async () => {
    const sandbox = new RecordingSandbox();
    await code.execute(
      itemContext(Object.assign(new CodeParameters(), { code: 'return item;' }), { item: { x: 1 }, itemIndex: 3, sandbox }),
    );
    expect(sandbox.calls[0].scope).toMatchObject({ item: { x: 1 }, itemIndex: 3 });
    expect(code.defaultRunMode).toBe('input');
  });
});
