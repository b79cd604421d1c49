import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { isRoutedOutput } from 'workflow-collection-service/sdk';
import { itemContext } from 'workflow-collection-service/sdk/testing';
import switchNode, { caseOf, SwitchParameters } from './index';

const cases = ['new', 'open', 'closed'];

describe('switch node', () => {
  it('picks a case by name or index, else the fallback', () => {
    expect(caseOf(cases, 'open')).toBe('open');
    expect(caseOf(cases, 2)).toBe('closed');
    expect(['lost', 3, -1, 1.5, null, undefined, true, { status: 'new' }].map((v) => caseOf(cases, v))).toEqual(Array(8).fill('fallback'));
  });

  it('routes the item to the chosen output', () => {
    const routed = switchNode.execute(itemContext(Object.assign(new SwitchParameters(), { cases, value: 'new' }), { item: { id: 1 } }));
    expect(isRoutedOutput(routed) && routed.outputs).toEqual({ new: { id: 1 } });
  });

  it('has one output per case and a fallback', () => {
    const outputs = switchNode.outputs as (p: SwitchParameters) => string[];
    expect(outputs(Object.assign(new SwitchParameters(), { cases }))).toEqual(['new', 'open', 'closed', 'fallback']);
  });

  it('refuses empty, repeated, malformed or reserved case names', () => {
    const bad = (values: object) => validateSync(plainToInstance(SwitchParameters, values)).map((e) => e.property);
    expect(bad({ cases: [] })).toEqual(['cases']);
    expect(bad({ cases: ['a', 'a'] })).toEqual(['cases']);
    expect(bad({ cases: ['has space'] })).toEqual(['cases']);
    expect(bad({ cases: ['fallback'] })).toEqual(['cases']);
    expect(bad({ cases: ['ok'], value: 'x' })).toEqual([]);
  });
});
