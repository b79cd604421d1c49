import type { CollectionsFacade, CollectionSummary } from './node-context';
import { collectionOptions, LoadOptionsContext, Parameter, parameterDocs } from './parameter';

/** A second, separately loaded copy of this file, as an outside plugin compiled with its own SDK has. */
function otherCopy(): typeof import('./parameter') {
  let copy: typeof import('./parameter') | undefined;
  jest.isolateModules(() => {
    copy = require('./parameter');
  });
  if (!copy || copy.Parameter === Parameter) throw new Error('expected a second copy of the module');
  return copy;
}

function collections(all: CollectionSummary[]): { facade: CollectionsFacade; pages: { offset: number; limit: number }[] } {
  const pages: { offset: number; limit: number }[] = [];
  const facade = {
    listCollections: async (page: { offset: number; limit: number }) => {
      pages.push(page);
      return { items: all.slice(page.offset, page.offset + page.limit), total: all.length };
    },
  } as unknown as CollectionsFacade;
  return { facade, pages };
}

const summary = (n: number, name: string, role: CollectionSummary['role'] = 'viewer'): CollectionSummary => ({
  id: `col_${String(n).padStart(4, '0')}`,
  name,
  role,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

describe('@Parameter docs', () => {
  it('are read by another copy of the SDK, as a plugin with its own copy writes them', () => {
    const copy = otherCopy();
    const loadOptions = () => [];
    class Params {
      @copy.Parameter({ description: 'Where to look', displayName: 'Collection', loadOptions })
      collectionId: string;
    }
    expect(parameterDocs(Params).get('collectionId')).toEqual({ description: 'Where to look', displayName: 'Collection', loadOptions });
  });

  it("keep a subclass's docs out of its parent, the nearest class winning", () => {
    class Base {
      @Parameter({ description: 'base a' })
      a: string;
    }
    class Derived extends Base {
      @Parameter({ description: 'derived a' })
      declare a: string;

      @Parameter({ description: 'derived b' })
      b: string;
    }
    expect([...parameterDocs(Base)]).toEqual([['a', { description: 'base a' }]]);
    expect(Object.fromEntries(parameterDocs(Derived))).toEqual({ a: { description: 'derived a' }, b: { description: 'derived b' } });
    expect(Object.keys(Base.prototype)).toEqual([]);
  });

  it('refuses a loadOptions that is not a function, naming the property', () => {
    expect(() => Parameter({ description: 'x', loadOptions: 'col_1' as never })({}, 'collectionId')).toThrow(
      '@Parameter() of collectionId: loadOptions must be a function',
    );
  });
});

describe('collectionOptions', () => {
  const context = (facade: CollectionsFacade, signal = new AbortController().signal): LoadOptionsContext => ({
    collections: facade,
    parameters: {},
    mcp: { connect: () => Promise.reject(new Error('not used')) },
    signal,
  });

  it('lists every collection the user can see by name, paging through the facade', async () => {
    const all = Array.from({ length: 230 }, (_, n) =>
      summary(n, `Collection ${String(229 - n).padStart(3, '0')}`, n === 0 ? 'owner' : 'viewer'),
    );
    const { facade, pages } = collections(all);
    const options = await collectionOptions(context(facade));
    expect(pages).toEqual([
      { offset: 0, limit: 100 },
      { offset: 100, limit: 100 },
      { offset: 200, limit: 100 },
    ]);
    expect(options).toHaveLength(230);
    expect(options[0]).toEqual({ value: 'col_0229', label: 'Collection 000', description: 'col_0229 (viewer)' });
    expect(options[229]).toEqual({ value: 'col_0000', label: 'Collection 229', description: 'col_0000 (owner)' });
  });

  it('keeps only collections where the user has at least the role asked', async () => {
    const { facade } = collections([summary(1, 'read only', 'viewer'), summary(2, 'shared', 'editor'), summary(3, 'mine', 'owner')]);
    expect((await collectionOptions(context(facade), { minRole: 'editor' })).map((o) => o.label)).toEqual(['mine', 'shared']);
  });

  it('stops once the signal is aborted', async () => {
    const { facade, pages } = collections([summary(1, 'a')]);
    const aborted = new AbortController();
    aborted.abort(new Error('gave up'));
    await expect(collectionOptions(context(facade, aborted.signal))).rejects.toThrow('gave up');
    expect(pages).toEqual([]);
  });
});
