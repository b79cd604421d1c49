import { ErrorCode } from '../common/app-error';
import { missingScopeOf, ScopeSet, tokenScopes } from './oauth-scopes';

const refusal = (check: () => void) => {
  try {
    check();
  } catch (error) {
    return { code: (error as { code?: string }).code, scope: missingScopeOf(error) };
  }
  return undefined;
};

describe('ScopeSet', () => {
  it('reads with read or write, writes with write only', () => {
    const read = new ScopeSet(['collections:read']);
    expect(refusal(() => read.requireCollection('col_a', false))).toBeUndefined();
    expect(refusal(() => read.requireCollection('col_a', true))).toEqual({
      code: ErrorCode.INSUFFICIENT_SCOPE,
      scope: 'collections:write',
    });
    const write = new ScopeSet(['collections:write']);
    expect(refusal(() => write.requireCollection('col_a', false))).toBeUndefined();
    expect(refusal(() => write.requireNewCollection())).toBeUndefined();
    expect(refusal(() => new ScopeSet([]).requireCollections(false))).toEqual({
      code: ErrorCode.INSUFFICIENT_SCOPE,
      scope: 'collections:read',
    });
  });

  it('narrows to the chosen collections and workflows, and a narrowed token creates no collection', () => {
    const scopes = new ScopeSet(tokenScopes('collections:write workflows:run', { collections: ['col_a'], workflows: ['wf_1'] }));
    expect(refusal(() => scopes.requireCollection('col_a', true))).toBeUndefined();
    expect(refusal(() => scopes.requireCollection('col_b', false))?.scope).toBe('collections:read');
    expect(refusal(() => scopes.requireNewCollection())?.scope).toBe('collections:write');
    expect(scopes.allowsWorkflow('wf_1')).toBe(true);
    expect(scopes.allowsWorkflow('wf_2')).toBe(false);
    expect(refusal(() => scopes.requireWorkflow('wf_2'))?.scope).toBe('workflows:run');
  });

  it('runs no workflow without workflows:run, whatever was chosen', () => {
    const scopes = new ScopeSet(tokenScopes('collections:read', { workflows: ['wf_1'] }));
    expect(scopes.allowsWorkflow('wf_1')).toBe(false);
    expect(refusal(() => scopes.requireWorkflow())?.scope).toBe('workflows:run');
  });
});
