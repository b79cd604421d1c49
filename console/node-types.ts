import { api } from './api-client';
import type { Credential, NodeType, NodeTypes, OptionItem, Page } from './api-types';

let catalogue: Promise<NodeTypes> | null = null;

/** The loaded node types do not change while the service runs: fetched once per page load. */
export function loadNodeTypes(): Promise<NodeTypes> {
  catalogue ??= api<NodeTypes>('GET', '/api/v1/node-types').catch((error) => {
    catalogue = null;
    throw error;
  });
  return catalogue;
}

/** The newest loaded version of a type, or the one a node pins. */
export function nodeTypeOf(types: readonly NodeType[], type: string, version?: number): NodeType | undefined {
  const versions = types.filter((t) => t.type === type);
  if (version !== undefined) return versions.find((t) => t.version === version);
  return versions.sort((a, b) => b.version - a.version)[0];
}

/**
 * A parameter whose schema carries `x-dynamic-options` has its choices computed by the server for
 * the caller (the collections they can see, ...): they are not cached across sign-ins. The node's
 * other parameters go along (`?parameters=`), for choices that depend on them (an MCP server's tools).
 */
export function loadOptions(
  type: string,
  version: number,
  parameter: string,
  parameters: Record<string, unknown> = {},
): Promise<OptionItem[]> {
  const others = Object.keys(parameters).length ? `?parameters=${encodeURIComponent(JSON.stringify(parameters))}` : '';
  const path = `/api/v1/node-types/${encodeURIComponent(type)}/${version}/parameters/${encodeURIComponent(parameter)}/options${others}`;
  return api<{ items: OptionItem[] }>('GET', path).then((answer) => answer.items);
}

/** The credentials the user holds a role on (any role lets a node name one), up to the API's page of 100. */
export function loadCredentials(): Promise<Credential[]> {
  return api<Page<Credential>>('GET', '/api/v1/credentials?limit=100').then((page) => page.items);
}
