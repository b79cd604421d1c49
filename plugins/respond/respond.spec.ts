import { inputContext, itemContext } from 'workflow-collection-service/sdk/testing';
import respond, { RespondParameters } from './index';

describe('respond node', () => {
  it("declares itself the run's answer and passes what reaches it on unchanged", () => {
    expect(respond.respond).toBe(true);
    expect(respond.execute(inputContext(new RespondParameters(), { input: [{ a: 1 }] }))).toEqual([{ a: 1 }]);
    expect(respond.execute(itemContext(new RespondParameters(), { item: 'x' }))).toBe('x');
  });
});
