import { InputModeContext } from 'workflow-collection-service/sdk';
import webhookTrigger, { WebhookTriggerParameters } from './index';

describe('webhook-trigger node', () => {
  it.each([[{ query: 'x', nested: [1, { a: null }] }], [[1, 2, 3]], ['text'], [null], [undefined]])(
    'outputs the input %j unchanged',
    async (input) => {
      const ctx = { runMode: 'input', input, params: new WebhookTriggerParameters() } as InputModeContext<WebhookTriggerParameters>;
      expect(await webhookTrigger.execute(ctx)).toBe(input);
    },
  );

  it('is the trigger, with no parameters', () => {
    expect(webhookTrigger.trigger).toBe(true);
    expect(Object.keys(new WebhookTriggerParameters())).toEqual([]);
  });
});
