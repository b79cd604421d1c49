import { isRoutedOutput } from 'workflow-collection-service/sdk';
import { itemContext } from 'workflow-collection-service/sdk/testing';
import filter, { FilterParameters } from './index';

describe('filter node', () => {
  it('sends kept items to kept and the others to discarded', () => {
    const kept = filter.execute(itemContext(Object.assign(new FilterParameters(), { condition: true }), { item: 'a' }));
    const dropped = filter.execute(itemContext(Object.assign(new FilterParameters(), { condition: false }), { item: 'b' }));
    expect(isRoutedOutput(kept) && kept.outputs).toEqual({ kept: 'a' });
    expect(isRoutedOutput(dropped) && dropped.outputs).toEqual({ discarded: 'b' });
    expect(filter.outputs).toEqual(['kept', 'discarded']);
  });
});
