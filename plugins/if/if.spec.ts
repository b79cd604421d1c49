import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { isRoutedOutput } from 'workflow-collection-service/sdk';
import { inputContext, itemContext } from 'workflow-collection-service/sdk/testing';
import ifNode, { IfParameters } from './index';

const params = (condition: boolean) => Object.assign(new IfParameters(), { condition });

describe('if node', () => {
  it('sends the item to true or false', () => {
    const yes = ifNode.execute(itemContext(params(true), { item: { a: 1 } }));
    const no = ifNode.execute(itemContext(params(false), { item: { a: 2 } }));
    expect(isRoutedOutput(yes) && yes.outputs).toEqual({ true: { a: 1 } });
    expect(isRoutedOutput(no) && no.outputs).toEqual({ false: { a: 2 } });
  });

  it('sends the whole input in run mode input', () => {
    const routed = ifNode.execute(inputContext(params(true), { input: [1, 2] }));
    expect(isRoutedOutput(routed) && routed.outputs).toEqual({ true: [1, 2] });
  });

  it('declares its two outputs and runs per item by default', () => {
    expect(ifNode.outputs).toEqual(['true', 'false']);
    expect(ifNode.defaultRunMode).toBe('item');
  });

  it('refuses a condition that is not a boolean', () => {
    expect(validateSync(plainToInstance(IfParameters, { condition: 'yes' })).map((e) => e.property)).toEqual(['condition']);
    expect(validateSync(plainToInstance(IfParameters, {})).map((e) => e.property)).toEqual(['condition']);
  });
});
