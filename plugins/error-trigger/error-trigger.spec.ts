import { InputModeContext } from 'workflow-collection-service/sdk';
import errorTrigger, { ErrorTriggerParameters } from './index';

describe('error-trigger node', () => {
  it('outputs what the failed run sent it, unchanged', async () => {
    const input = {
      workflow: { id: 'wfl_1', name: 'nightly' },
      run: { id: 'run_1' },
      error: { code: 'UPSTREAM_FAILED', message: 'boom', nodeId: 'fetch' },
    };
    const ctx = { runMode: 'input', input, params: new ErrorTriggerParameters() } as InputModeContext<ErrorTriggerParameters>;
    expect(await errorTrigger.execute(ctx)).toBe(input);
  });

  it('is a trigger, with no parameters', () => {
    expect(errorTrigger.trigger).toBe(true);
    expect(Object.keys(new ErrorTriggerParameters())).toEqual([]);
  });
});
