import { completions, highlight, pathAtCaret } from './expression-help';
import { previewExpression } from './expression-preview';

const scope = { item: { total: 150, name: 'Ada', tags: ['a', 'b'] }, nodes: { orders: [{ id: 1 }, { id: 2 }] }, variables: { rate: 2 } };
const value = (source: string) => previewExpression(source, scope);

describe("expression preview (the console's evaluation of expressions, without eval)", () => {
  it.each([
    ['item.total > 100', true],
    ['item.total * variables.rate', 300],
    ['item.name.toUpperCase()', 'ADA'],
    ['nodes.orders.map((o) => o.id * 10)', [10, 20]],
    ['nodes.orders.filter(o => o.id > 1).length', 1],
    ['item.missing?.deep ?? "none"', 'none'],
    ['({ ...item, tags: undefined, n: Math.max(1, 4) })', { total: 150, name: 'Ada', n: 4 }],
    ['Object.keys(item).join(",")', 'total,name,tags'],
    ['item.tags[1]', 'b'],
  ])('%s', (source, expected) => {
    expect(value(source)).toEqual({ ok: true, value: expected });
  });

  it('fills a template like the server: ${} parts evaluated, the rest kept, backticks included', () => {
    expect(value('Total: ${item.total + 1} for ${item.name}')).toEqual({ ok: true, value: 'Total: 151 for Ada' });
    expect(value('`${item.name}`')).toEqual({ ok: true, value: '`Ada`' });
    expect(value('`plain ` + item.name')).toEqual({ ok: true, value: 'plain Ada' });
  });

  it('reports errors as the evaluation would give them', () => {
    expect(value('item.total >')).toMatchObject({ ok: false });
    expect(value('item.missing.deep')).toEqual({ ok: false, reason: "Cannot read properties of undefined (reading 'deep')" });
    expect(value('nope + 1')).toEqual({ ok: false, reason: 'nope is not defined' });
  });

  it('refuses to guess what it does not model, and never reaches the page', () => {
    expect(value('item.constructor.constructor("return window")()')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('not previewed'),
    });
    expect(value('globalThis')).toMatchObject({ ok: false });
    expect(value('fetch("/x")')).toMatchObject({ ok: false });
    expect(value('[1,2,3].map(x => { return x })')).toMatchObject({ ok: false, reason: expect.stringContaining('not previewed') });
    expect(value('Array.from({ length: 1e7 }).map((_, i) => i)')).toMatchObject({ ok: false });
  });
});

describe('expression editor helpers', () => {
  it('finds the path being typed before the caret', () => {
    expect(pathAtCaret('item.to')).toEqual({ path: ['item'], prefix: 'to' });
    expect(pathAtCaret('x + nodes.')).toEqual({ path: ['nodes'], prefix: '' });
    expect(pathAtCaret('va')).toEqual({ path: [], prefix: 'va' });
  });

  it('refuses, before allocating, values larger than the preview allows, instead of taking the tab down', () => {
    const refused = (source: string) => {
      const result = previewExpression(source, scope);
      expect(result).toEqual({ ok: false, reason: expect.stringMatching(/^not previewed: it builds values of more than/) });
    };
    refused("({ n: 'x'.repeat(2**28).split('').length })");
    refused("'x'.padStart(1e9)");
    refused("[1, 2, 3].map(() => 'y'.repeat(2000000))");
    refused("[...'abcdefghijklmnopqrstuvwxyz1234'].reduce((s) => s + s, 'ab')");
    // An array-like is not allocated whole.
    expect(previewExpression('Array.from({ length: 2 ** 30 }).length', scope)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('not previewed'),
    });
    // Ordinary work stays within the budget.
    expect(previewExpression("'ab'.repeat(3)", scope)).toEqual({ ok: true, value: 'ababab' });
  });

  it('completes scope names, node ids, variables and keys of the sample data', () => {
    const s = { runMode: 'item' as const, nodeIds: ['orders', 'other'], variables: ['rate'], sample: { runId: 'run_1', values: scope } };
    expect(completions(s, [], 'i').map((c) => c.label)).toEqual(['item']);
    expect(completions(s, ['nodes'], 'o').map((c) => c.label)).toEqual(['orders', 'other']);
    expect(completions(s, ['variables'], '').map((c) => c.label)).toEqual(['rate']);
    expect(completions(s, ['item'], 't').map((c) => c.label)).toEqual(['total', 'tags']);
  });

  it("highlights names in scope, strings and numbers, and a template's text as text", () => {
    expect(
      highlight('item.total > 100')
        .filter((t) => t.kind !== 'plain')
        .map((t) => `${t.kind}:${t.text}`),
    ).toEqual(['root:item', 'punc:.', 'name:total', 'punc:>', 'num:100']);
    expect(highlight('Hi ${item.name}!').map((t) => t.kind)).toEqual(['tpl', 'punc', 'root', 'punc', 'name', 'punc', 'tpl']);
  });
});
