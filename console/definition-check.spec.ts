import type { NodeType } from './api-types';
import { checkDefinition, problemsByNode } from './definition-check';

const trigger: NodeType = {
  type: 'webhook-trigger',
  version: 1,
  displayName: 'Webhook Trigger',
  description: '',
  trigger: true,
  defaultRunMode: 'input',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
};
const search: NodeType = {
  type: 'search-collection',
  version: 1,
  displayName: 'Search Collection',
  description: '',
  trigger: false,
  defaultRunMode: 'input',
  parameters: {
    type: 'object',
    properties: {
      collectionId: { type: 'string', minLength: 1 },
      query: { type: 'string', minLength: 1, maxLength: 8192 },
      topK: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
      mode: { enum: ['vector', 'hybrid'], default: 'vector' },
      statuses: { type: 'array', items: { type: 'string', enum: ['indexed', 'error'] }, uniqueItems: true },
    },
    required: ['collectionId', 'query'],
    additionalProperties: false,
  },
};
const TYPES = [trigger, search];
const MODES = ['fixed', 'expression'] as const;

const check = (definition: unknown) => checkDefinition(JSON.stringify(definition), TYPES, [...MODES]);
const withSearch = (node: Record<string, unknown>, edges = [{ from: 'trigger', to: 'search' }]) => ({
  nodes: [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    { id: 'search', type: 'search-collection', ...node },
  ],
  edges,
});

describe('checkDefinition', () => {
  it('accepts a valid definition and hands it back', () => {
    const result = check(
      withSearch({ parameters: { collectionId: 'col_1', query: 'volcanoes', topK: 3, mode: 'hybrid', statuses: ['indexed'] } }),
    );
    expect(result.problems).toEqual([]);
    expect((result.value as { nodes: unknown[] }).nodes).toHaveLength(2);
  });

  it('names the node and the parameter of each schema violation', () => {
    const definition = withSearch({
      parameters: { query: '', topK: 0, mode: 'fuzzy', statuses: ['indexed', 'indexed', 'gone'], colour: 'red' },
    });
    const { problems, value } = check(definition);
    // Advice only: the definition is handed back all the same, for the server to judge when saved.
    expect(value).toEqual(definition);
    expect(problems).toEqual(
      expect.arrayContaining([
        { field: 'nodes[1].parameters.collectionId', reason: 'is required', nodeId: 'search' },
        { field: 'nodes[1].parameters.query', reason: 'must not be empty', nodeId: 'search' },
        { field: 'nodes[1].parameters.topK', reason: 'must be at least 1', nodeId: 'search' },
        { field: 'nodes[1].parameters.mode', reason: 'must be one of "vector", "hybrid"', nodeId: 'search' },
        { field: 'nodes[1].parameters.statuses', reason: 'must not repeat an item', nodeId: 'search' },
        { field: 'nodes[1].parameters.statuses.2', reason: 'must be one of "indexed", "error"', nodeId: 'search' },
        { field: 'nodes[1].parameters.colour', reason: 'is not a parameter of this node', nodeId: 'search' },
      ]),
    );
    expect(problems).toHaveLength(7);
    expect([...problemsByNode(problems).keys()]).toEqual(['search']);
  });

  it('leaves expression parameters to run time but wants their source', () => {
    expect(
      check(
        withSearch({
          parameters: { collectionId: 'col_1', query: 'input.q', topK: 'input.k' },
          parameterMode: { query: 'expression', topK: 'expression' },
        }),
      ).problems,
    ).toEqual([]);
    expect(check(withSearch({ parameters: { collectionId: 'col_1' }, parameterMode: { query: 'expression' } })).problems).toEqual([
      { field: 'nodes[1].parameters.query', reason: 'an expression must be a non-empty string', nodeId: 'search' },
    ]);
  });

  it('refuses a mode the service does not offer and a mode for a parameter the node lacks', () => {
    const { problems } = check(
      withSearch({ parameters: { collectionId: 'col_1', query: 'q' }, parameterMode: { query: 'ai', nope: 'fixed' } }),
    );
    expect(problems).toEqual([
      { field: 'nodes[1].parameterMode.query', reason: 'must be one of fixed, expression', nodeId: 'search' },
      { field: 'nodes[1].parameterMode.nope', reason: 'search-collection has no parameter "nope"', nodeId: 'search' },
    ]);
  });

  it('checks node types, versions, ids, edges and the one trigger', () => {
    const { problems } = check({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger' },
        { id: 'trigger', type: 'search-collection', parameters: { collectionId: 'c', query: 'q' } },
        { id: '9lives', type: 'nope' },
        { id: 'old', type: 'search-collection', version: 7 },
        { id: 'lonely', type: 'search-collection', parameters: { collectionId: 'c', query: 'q' } },
      ],
      edges: [
        { from: 'trigger', to: 'ghost' },
        { from: 'lonely', to: 'lonely' },
        { from: 'old', to: 'trigger' },
      ],
    });
    expect(problems.map((p) => `${p.field}: ${p.reason}`)).toEqual([
      'nodes[1].id: duplicate node id "trigger"',
      'nodes[2].id: must start with a letter or _ and hold at most 64 letters, digits, _ or -',
      'nodes[2].type: unknown node type "nope"',
      'nodes[3].version: node type search-collection has no version 7; loaded: 1',
      'edges[0].to: no node has the id "ghost"',
      'edges[1]: node "lonely" cannot feed itself',
      'nodes[0]: a trigger node cannot have incoming edges',
    ]);
  });

  it('says when the text is not JSON or not a definition', () => {
    const broken = checkDefinition('{"nodes": [', TYPES, [...MODES]);
    expect(broken.problems[0]).toMatchObject({ field: '(json)', reason: expect.stringContaining('not valid JSON') });
    // Nothing to send: the only case where the editor cannot save.
    expect(broken.value).toBeUndefined();
    const array = checkDefinition('[]', TYPES, [...MODES]);
    expect(array.problems).toEqual([{ field: '(json)', reason: 'the definition must be a JSON object with "nodes" and "edges"' }]);
    expect(array.value).toEqual([]);
    expect(check({ nodes: [{ id: 'trigger', type: 'webhook-trigger' }], extra: 1 }).problems).toEqual([
      { field: 'extra', reason: 'is not part of a definition (nodes, edges, variables, pinnedData, notes)' },
    ]);
    // Sticky notes and disabled nodes are part of it; a disabled trigger is not.
    const note = { id: 'note', text: 'why', position: { x: 0, y: 0 }, width: 240, height: 120 };
    expect(check({ nodes: [{ id: 'trigger', type: 'webhook-trigger' }], notes: [note] }).problems).toEqual([]);
    expect(check({ nodes: [{ id: 'trigger', type: 'webhook-trigger', disabled: true }] }).problems).toEqual([
      { field: 'nodes[0].disabled', reason: 'a trigger cannot be disabled: it is how every run starts', nodeId: 'trigger' },
    ]);
    // Pinned data belongs to the draft; pinned on no node, the server refuses it.
    expect(check({ nodes: [{ id: 'trigger', type: 'webhook-trigger' }], pinnedData: { trigger: [1] } }).problems).toEqual([]);
    expect(check({ nodes: [{ id: 'trigger', type: 'webhook-trigger' }], pinnedData: { ghost: 1 } }).problems).toEqual([
      { field: 'pinnedData.ghost', reason: 'names no node of the workflow' },
    ]);
  });

  it('wants every node but the trigger connected, and exactly one trigger', () => {
    expect(check({ nodes: [{ id: 'a', type: 'search-collection', parameters: { collectionId: 'c', query: 'q' } }] }).problems).toEqual([
      { field: 'nodes', reason: 'needs exactly one trigger node' },
      { field: 'nodes[0]', reason: 'not connected: every node except the trigger needs an incoming edge', nodeId: 'a' },
    ]);
  });
});
