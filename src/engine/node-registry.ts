import type { LoadOptions, NodeDefinition } from '../sdk';
import { JsonSchema, ParameterType } from './parameter-schema';

/** A loaded node type with what the engine derives from it once, at boot. */
export interface RegisteredNode {
  readonly definition: NodeDefinition;
  /** The file it was loaded from, for messages. */
  readonly source: string;
  readonly schema: JsonSchema;
  readonly parameterTypes: Readonly<Record<string, ParameterType>>;
  readonly parameterNames: ReadonlySet<string>;
  /** Text parameters whose `${...}` insertions are rendered in fixed mode too (`@Parameter({ template: true })`). */
  readonly templateParameters: ReadonlySet<string>;
  /** JavaScript source parameters (`@Parameter({ code: true })`), syntax-checked when a workflow is saved. */
  readonly codeParameters: ReadonlySet<string>;
  /** Parameters with dynamic options (`@Parameter({ loadOptions })`), listed for the builder. */
  readonly optionLoaders: ReadonlyMap<string, LoadOptions>;
  /** Credential parameters (`@Parameter({ credential })`), with the types they accept (null: any). */
  readonly credentialParameters: ReadonlyMap<string, readonly string[] | null>;
  /** Parameters that name collections (`@Parameter({ collection })`), with the role their saver needs. */
  readonly collectionParameters: ReadonlyMap<string, 'viewer' | 'editor'>;
}

export const nodeKey = (type: string, version: number): string => `${type}@${version}`;

/** The node types this process knows, by `type@version`. Built once at boot and never changed. */
export class NodeRegistry {
  private readonly byKey = new Map<string, RegisteredNode>();
  private readonly latest = new Map<string, RegisteredNode>();

  constructor(nodes: readonly RegisteredNode[]) {
    for (const node of nodes) {
      const { type, version } = node.definition;
      const key = nodeKey(type, version);
      const existing = this.byKey.get(key);
      if (existing) throw new PluginLoadError(node.source, `${key} is already defined by ${existing.source}`);
      this.byKey.set(key, node);
      const newest = this.latest.get(type);
      if (!newest || newest.definition.version < version) this.latest.set(type, node);
    }
  }

  /** The given version, or the newest one when `version` is omitted. */
  get(type: string, version?: number): RegisteredNode | undefined {
    return version === undefined ? this.latest.get(type) : this.byKey.get(nodeKey(type, version));
  }

  versionsOf(type: string): number[] {
    return this.list()
      .filter((n) => n.definition.type === type)
      .map((n) => n.definition.version);
  }

  /** Sorted by type, then version. */
  list(): RegisteredNode[] {
    return [...this.byKey.values()].sort(
      (a, b) => a.definition.type.localeCompare(b.definition.type) || a.definition.version - b.definition.version,
    );
  }
}

/** A plugin that cannot be used: it fails to load, is malformed, or repeats a `type@version`. */
export class PluginLoadError extends Error {
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`Plugin ${file}: ${problem}`);
    this.name = 'PluginLoadError';
  }
}
