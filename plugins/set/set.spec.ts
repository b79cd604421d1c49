import { itemContext } from 'workflow-collection-service/sdk/testing';
import set, { editFields, SetParameters } from './index';

const params = (values: Partial<SetParameters>) => Object.assign(new SetParameters(), values);

describe('set node', () => {
  it('adds and replaces fields, nested ones too, without changing the input', () => {
    const input = { a: 1, meta: { source: 'x', keep: true } };
    const out = editFields(input, params({ fields: { a: 2, b: 'new', 'meta.source': 'y' } }));
    expect(out).toEqual({ a: 2, b: 'new', meta: { source: 'y', keep: true } });
    expect(input).toEqual({ a: 1, meta: { source: 'x', keep: true } });
  });

  it('renames and removes fields after setting them', () => {
    const out = editFields(
      { fullName: 'Ada', secret: 's', nested: { drop: 1, stay: 2 } },
      params({ rename: { fullName: 'person.name' }, remove: ['secret', 'nested.drop', 'missing'] }),
    );
    expect(out).toEqual({ person: { name: 'Ada' }, nested: { stay: 2 } });
  });

  it('keeps only the set and renamed fields when told to', () => {
    expect(editFields({ a: 1, b: 2, c: 3 }, params({ fields: { d: 4 }, rename: { a: 'x' }, keepOnly: true }))).toEqual({ d: 4, x: 1 });
    expect(editFields('not an object', params({ fields: { d: 4 }, keepOnly: true }))).toEqual({ d: 4 });
  });

  it('refuses to edit what is not an object, and field names that reach a prototype', () => {
    expect(() => editFields([1], params({ fields: { a: 1 } }))).toThrow(/works on objects/);
    expect(() => editFields({}, params({ fields: { '__proto__.polluted': true } }))).toThrow(/not a usable field name/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('runs per item by default', async () => {
    expect(await set.execute(itemContext(params({ fields: { seen: true } }), { item: { id: 1 } }))).toEqual({ id: 1, seen: true });
  });
});
