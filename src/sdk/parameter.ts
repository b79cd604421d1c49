/**
 * Documentation of one node parameter, read by the JSON Schema generator. Validation stays with
 * class-validator decorators on the same property, so the one class is both the type of
 * `ctx.params` and the description the builder shows.
 */
export interface ParameterDoc {
  description: string;
  /** Label for the builder; defaults to the property name. */
  displayName?: string;
  /** Extra JSON Schema keywords (e.g. `examples`, `format`, `contentMediaType`). */
  schema?: Record<string, unknown>;
  /**
   * A text parameter with `${...}` insertions rendered before each execution even in fixed mode
   * (like `instructions`): text without insertions is used as it is, never parsed as code.
   */
  template?: boolean;
  /**
   * The value is JavaScript source run by the node in the sandbox (a function body, like the Code
   * node's `code`): a syntax error is refused when the workflow is saved, naming the position.
   */
  code?: boolean;
}

const DOCS = new WeakMap<object, Map<string, ParameterDoc>>();

/** `@Parameter({ description: 'Target URL' })` on each field of a node's parameter class. */
export function Parameter(doc: ParameterDoc): PropertyDecorator {
  return (prototype, property) => {
    if (typeof property !== 'string') throw new TypeError('@Parameter() needs a string property name');
    const docs = DOCS.get(prototype) ?? new Map<string, ParameterDoc>();
    docs.set(property, doc);
    DOCS.set(prototype, docs);
  };
}

/** Docs of every documented property of the class, inherited ones included (nearest class wins). */
export function parameterDocs(parametersClass: abstract new () => object): Map<string, ParameterDoc> {
  const chain: object[] = [];
  for (let proto: object | null = parametersClass.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    chain.unshift(proto);
  }
  const merged = new Map<string, ParameterDoc>();
  for (const proto of chain) for (const [name, doc] of DOCS.get(proto) ?? []) merged.set(name, doc);
  return merged;
}
