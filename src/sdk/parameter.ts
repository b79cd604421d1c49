import type { CollectionsFacade, McpClients } from './node-context';

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
  /**
   * Dynamic options: the values the builder offers in a dropdown, listed when the user opens it
   * and as that user (e.g. the collections they can see). The parameter's JSON Schema then carries
   * `"x-dynamic-options": true`; a workflow may still set any value the validators accept.
   */
  loadOptions?: LoadOptions;
  /**
   * The value is a credential's id (`crd_...`) of one of these types (`bearer`, `basic`, `header`,
   * `query`, `oauth2-client-credentials`; `true`: any), for the node to pass to ctx.http or a chat
   * endpoint, which inject it at send time. It must be a fixed value: which credential a node uses
   * is decided when the workflow is saved, by someone allowed to use it, never by an expression.
   * The JSON Schema carries `"format": "credential"` and `"x-credential-types"`.
   */
  credential?: readonly string[] | true;
  /**
   * The value is a list of objects each of which may name a credential in its `credential` field
   * (e.g. servers to call, each with its own). The same rules as `credential` hold for each: the
   * list is a fixed value, and each credential is one its saver may use, of these types.
   * The JSON Schema carries `"x-credential-items"` with the types.
   */
  credentialItems?: readonly string[] | true;
  /**
   * The value names a collection (`col_...`), or is a list of them, which the node reads (`viewer`)
   * or adds to (`editor`) with the rights of the run's user. As a fixed value it is checked when the
   * workflow is saved: whoever saves it must hold that role on each collection named (refused with
   * a 400 naming the node and field); what an expression names is checked when the run reads it.
   */
  collection?: 'viewer' | 'editor';
}

/** One entry of a parameter's dropdown. */
export interface ParameterOption {
  /** What the parameter is set to when the entry is chosen. */
  value: string | number | boolean;
  label: string;
  description?: string;
}

/**
 * What `loadOptions` may use. It runs while someone builds a workflow, outside any run: there is
 * no input, no variables and no run, only the services that act as the user asking.
 */
export interface LoadOptionsContext {
  /** Collections as the user who opened the dropdown may see them. */
  readonly collections: CollectionsFacade;
  /**
   * The node's other parameters as the builder holds them now (fixed values only; may be
   * incomplete or wrong: check what you read), e.g. the server whose tools to list.
   */
  readonly parameters: Readonly<Record<string, unknown>>;
  /** Outside MCP servers, through the outbound guard, with the credentials the user may use. */
  readonly mcp: McpClients;
  /** Aborted when the service stops waiting for the answer: pass it to anything that waits. */
  readonly signal: AbortSignal;
}

/**
 * Lists a parameter's options. Throw NodeUpstreamError when a system it asked failed (the caller
 * gets a 502 with the message); any other failure is a 500 that says nothing of it.
 */
export type LoadOptions = (ctx: LoadOptionsContext) => Promise<readonly ParameterOption[]> | readonly ParameterOption[];

/**
 * Docs live on the parameter class's prototype under a registry-wide symbol rather than in a map
 * of this module, so they are found whichever copy of the SDK the plugin was compiled against
 * (an outside plugin may carry its own).
 */
const DOCS = Symbol.for('workflow-collection-service.parameter-docs');

type Documented = { [DOCS]?: Map<string, ParameterDoc> };

/** For `@Transform(numeric)`: a number written as text (a form field's value) becomes the number; anything else stays as it is. */
export const numeric = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;

/** A credential's id, as a `credential` parameter holds it: `@Matches(CREDENTIAL_ID, { message: credentialIdMessage })`. */
export const CREDENTIAL_ID = /^crd_[A-Za-z0-9]{1,64}$/;
export const credentialIdMessage = ({ property }: { property: string }): string => `${property} must be a credential id (crd_...)`;

/** `@Parameter({ description: 'Target URL' })` on each field of a node's parameter class. */
export function Parameter(doc: ParameterDoc): PropertyDecorator {
  return (prototype, property) => {
    if (typeof property !== 'string') throw new TypeError('@Parameter() needs a string property name');
    if (doc.loadOptions !== undefined && typeof doc.loadOptions !== 'function')
      throw new TypeError(`@Parameter() of ${property}: loadOptions must be a function`);
    ownDocs(prototype).set(property, doc);
  };
}

/** Docs of every documented property of the class, inherited ones included (nearest class wins). */
export function parameterDocs(parametersClass: abstract new () => object): Map<string, ParameterDoc> {
  const chain: object[] = [];
  for (let proto: object | null = parametersClass.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    chain.unshift(proto);
  }
  const merged = new Map<string, ParameterDoc>();
  for (const proto of chain) {
    const docs = Object.prototype.hasOwnProperty.call(proto, DOCS) ? (proto as Documented)[DOCS] : undefined;
    for (const [name, doc] of docs ?? []) merged.set(name, doc);
  }
  return merged;
}

/** The prototype's own docs, created on first use; a subclass never writes into its parent's. */
function ownDocs(prototype: object): Map<string, ParameterDoc> {
  if (!Object.prototype.hasOwnProperty.call(prototype, DOCS)) {
    Object.defineProperty(prototype, DOCS, { value: new Map<string, ParameterDoc>(), enumerable: false });
  }
  return (prototype as Documented)[DOCS]!;
}

/** The most entries `collectionOptions` lists: a dropdown longer than this is not read. */
const MAX_COLLECTION_OPTIONS = 1000;

const ROLE_RANK = { viewer: 0, editor: 1, owner: 2 } as const;

/**
 * A ready `loadOptions` for a collection id parameter: every collection the user can see (with at
 * least `minRole`, default viewer), by name, with its id and the user's role as description.
 *
 *     @Parameter({ description: 'Collection to read', loadOptions: collectionOptions })
 *     @Parameter({ description: 'Collection to write', loadOptions: (ctx) => collectionOptions(ctx, { minRole: 'editor' }) })
 */
export async function collectionOptions(
  ctx: LoadOptionsContext,
  filter: { minRole?: keyof typeof ROLE_RANK } = {},
): Promise<ParameterOption[]> {
  const least = ROLE_RANK[filter.minRole ?? 'viewer'];
  const options: ParameterOption[] = [];
  for (let offset = 0; offset < MAX_COLLECTION_OPTIONS; offset += 100) {
    ctx.signal.throwIfAborted();
    const page = await ctx.collections.listCollections({ offset, limit: 100 });
    for (const c of page.items) {
      if (ROLE_RANK[c.role] >= least) options.push({ value: c.id, label: c.name, description: `${c.id} (${c.role})` });
    }
    if (page.items.length < 100 || offset + page.items.length >= page.total) break;
  }
  return options.sort(
    (a, b) => a.label.localeCompare(b.label, undefined, { sensitivity: 'base' }) || String(a.value).localeCompare(String(b.value)),
  );
}
