import { defineNode, NodeConfigurationError, NodeInput } from 'workflow-collection-service/sdk';
import { KEY_JOINS, MergeParameters, POSITION_JOINS } from './merge.parameters';

export { MergeParameters };

type Item = Record<string, unknown>;

/** An input's items: its array, one item for anything else; nothing for an input that produced nothing. */
function itemsOf(input: NodeInput): unknown[] {
  if (!input.live) return [];
  return Array.isArray(input.data) ? input.data : [input.data];
}

function asItem(value: unknown, where: string): Item {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Item;
  throw new NodeConfigurationError(`${where} is not an object: merging by key or by position joins objects`, {
    details: { item: value ?? null },
  });
}

function valueAt(item: Item, path: string): unknown {
  let value: unknown = item;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Item)[part];
  }
  return value;
}

/** Items are joined on their key's JSON, so 1 and "1" stay apart and objects compare by value. */
const keyOf = (item: Item, path: string): string | undefined => {
  const value = valueAt(item, path);
  return value === undefined || value === null ? undefined : JSON.stringify(value);
};

export function mergeByKey(inputs: unknown[][], key: string, join: (typeof KEY_JOINS)[number]): Item[] {
  const [left, ...others] = inputs.map((items, i) => items.map((item, j) => asItem(item, `input ${i + 1}, item ${j}`)));
  const right = new Map<string, Item>();
  const unmatched = new Set<string>();
  for (const items of others) {
    for (const item of items) {
      const k = keyOf(item, key);
      if (k === undefined) continue;
      right.set(k, { ...right.get(k), ...item });
      unmatched.add(k);
    }
  }
  const merged: Item[] = [];
  for (const item of left ?? []) {
    const k = keyOf(item, key);
    const match = k === undefined ? undefined : right.get(k);
    if (match) {
      merged.push({ ...item, ...match });
      unmatched.delete(k!);
    } else if (join !== 'inner') {
      merged.push(item);
    }
  }
  if (join === 'outer') for (const k of unmatched) merged.push(right.get(k)!);
  return merged;
}

export function mergeByPosition(inputs: unknown[][], join: (typeof POSITION_JOINS)[number]): Item[] {
  const lengths = inputs.map((items) => items.length);
  const count = inputs.length === 0 ? 0 : join === 'longest' ? Math.max(...lengths) : Math.min(...lengths);
  return Array.from({ length: count }, (_, j) =>
    Object.assign({}, ...inputs.map((items, i) => (j < items.length ? asItem(items[j], `input ${i + 1}, item ${j}`) : {}))),
  );
}

export default defineNode({
  type: 'merge',
  version: 1,
  displayName: 'Merge',
  description:
    'Combines what its incoming edges bring, once every one of them is settled: appends the items, joins them by a key field (inner, left or outer) or merges them by position. An input that produced nothing counts as empty.',
  parameters: MergeParameters,
  defaultRunMode: 'input',
  execute(ctx) {
    const { mode, key, join } = ctx.params;
    const inputs = ctx.inputs.map(itemsOf);
    if (mode === 'append') return inputs.flat();
    if (mode === 'byPosition') {
      if (join !== undefined && !(POSITION_JOINS as readonly string[]).includes(join)) {
        throw new NodeConfigurationError(`join must be ${POSITION_JOINS.join(' or ')} when merging by position`, { details: { join } });
      }
      return mergeByPosition(inputs, (join as (typeof POSITION_JOINS)[number]) ?? 'shortest');
    }
    if (!key) throw new NodeConfigurationError('Merging by key needs the key parameter: the field the items are matched on');
    if (join !== undefined && !(KEY_JOINS as readonly string[]).includes(join)) {
      throw new NodeConfigurationError(`join must be ${KEY_JOINS.join(', ')} when merging by key`, { details: { join } });
    }
    return mergeByKey(inputs, key, (join as (typeof KEY_JOINS)[number]) ?? 'inner');
  },
});
