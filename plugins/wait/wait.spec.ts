import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { isWaitRequest, NodeConfigurationError } from 'workflow-collection-service/sdk';
import { inputContext, itemContext } from 'workflow-collection-service/sdk/testing';
import wait, { WaitParameters } from './index';

const params = (values: Partial<WaitParameters> = {}) => Object.assign(new WaitParameters(), values);

function request(out: unknown) {
  if (!isWaitRequest(out)) throw new Error('expected a wait request');
  return out;
}

describe('wait node', () => {
  it('asks the run to wait for amount x unit, and passes its input on', () => {
    const before = Date.now();
    const out = request(wait.execute(inputContext(params({ amount: 2, unit: 'hours' }), { input: { a: 1 } })));
    expect(out.output).toEqual({ a: 1 });
    expect(out.until.getTime() - before).toBeGreaterThanOrEqual(2 * 3_600_000);
    expect(out.until.getTime() - before).toBeLessThan(2 * 3_600_000 + 60_000);
  });

  it('waits until a moment instead, and not at all for a moment past', () => {
    const at = new Date(Date.now() + 86_400_000).toISOString();
    expect(request(wait.execute(itemContext(params({ until: at }), { item: 7 }))).until.toISOString()).toBe(at);
    const past = request(wait.execute(inputContext(params({ until: '2020-01-01T00:00:00Z' }))));
    expect(past.until.getTime()).toBeGreaterThan(Date.parse('2020-01-02T00:00:00Z'));
  });

  it('refuses to wait more than a year', () => {
    expect(() => wait.execute(inputContext(params({ amount: 400, unit: 'days' })))).toThrow(NodeConfigurationError);
  });

  it('refuses a negative amount, an unknown unit and a moment that is not ISO 8601', () => {
    const errors = validateSync(plainToInstance(WaitParameters, { amount: -1, unit: 'weeks', until: 'tomorrow' }));
    expect(errors.map((e) => e.property).sort()).toEqual(['amount', 'unit', 'until']);
  });
});
