import { defineNode, NodeConfigurationError } from 'workflow-collection-service/sdk';
import { SetParameters } from './set.parameters';

export { SetParameters };

type Item = Record<string, unknown>;

/** Property names that would reach a prototype instead of a field of the item. */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

function pathOf(name: string): string[] {
  const parts = name.split('.');
  if (parts.some((part) => part === '' || FORBIDDEN.has(part))) {
    throw new NodeConfigurationError(`"${name}" is not a usable field name`, { details: { field: name } });
  }
  return parts;
}

const isObject = (value: unknown): value is Item => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Sets `value` at `name` in a copy of `item`: the objects on the way are copied, never the input's own. */
function setAt(item: Item, name: string, value: unknown): Item {
  const [head, ...rest] = pathOf(name);
  const copy: Item = { ...item };
  copy[head] = rest.length ? setAt(isObject(item[head]) ? (item[head] as Item) : {}, rest.join('.'), value) : value;
  return copy;
}

function getAt(item: Item, name: string): { found: boolean; value?: unknown } {
  let value: unknown = item;
  for (const part of pathOf(name)) {
    if (!isObject(value) || !Object.prototype.hasOwnProperty.call(value, part)) return { found: false };
    value = value[part];
  }
  return { found: true, value };
}

function removeAt(item: Item, name: string): Item {
  const [head, ...rest] = pathOf(name);
  if (!Object.prototype.hasOwnProperty.call(item, head)) return item;
  const copy: Item = { ...item };
  if (rest.length === 0) delete copy[head];
  else if (isObject(item[head])) copy[head] = removeAt(item[head] as Item, rest.join('.'));
  return copy;
}

/** Applies the edits to one item: set, rename, remove, in that order. */
export function editFields(input: unknown, params: SetParameters): Item {
  if (!isObject(input) && !params.keepOnly) {
    throw new NodeConfigurationError(
      'Edit Fields works on objects: the item is not one (set keepOnly to build a new object from the fields alone)',
      {
        details: { item: input ?? null },
      },
    );
  }
  let item: Item = params.keepOnly ? {} : (input as Item);
  for (const [name, value] of Object.entries(params.fields)) item = setAt(item, name, value);
  for (const [from, to] of Object.entries(params.rename)) {
    const source = isObject(input) ? getAt(input, from) : { found: false };
    if (!source.found) continue;
    if (!params.keepOnly) item = removeAt(item, from);
    item = setAt(item, to, source.value);
  }
  for (const name of params.remove) item = removeAt(item, name);
  return item;
}

export default defineNode({
  type: 'set',
  version: 1,
  displayName: 'Edit Fields (Set)',
  description:
    'Adds, replaces, renames and removes fields of each item (dotted names reach into nested objects), or builds new objects from the fields alone. The input itself is never changed.',
  parameters: SetParameters,
  defaultRunMode: 'item',
  execute: (ctx) => editFields(ctx.runMode === 'input' ? ctx.input : ctx.item, ctx.params),
});
