import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiResponse, startTestApp, TestApp } from '../utils/test-app';
import { ensureStdioBuild, STDIO_ENTRY } from './mcp.helpers';
import { waitForRun } from '../utils/workflows-fixtures';

interface FieldError {
  field: string;
  reason: string;
}

/**
 * One validation per input shape: the REST API and the MCP tools (remote, and the stdio program
 * that calls the REST API) check the same DTO classes, so the same bad input gets the same refusal
 * at both doors, under the argument names each door uses. A required field that is absent is
 * listed once, as "is required". A body of the wrong media type is a 415 that says what to send.
 */
describe('validation at both doors', () => {
  let t: TestApp;
  let collectionId: string;
  const clients: Client[] = [];
  const mcp: Record<'Streamable HTTP' | 'stdio', Client> = {} as never;

  beforeAll(async () => {
    ensureStdioBuild();
    t = await startTestApp();
    collectionId = (await t.request('POST', '/api/v1/collections', { body: { name: 'Validation' } })).body.id;
    const remote = new Client({ name: 'e2e', version: '1.0.0' });
    await remote.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers: { authorization: `Bearer ${t.admin.key}` } } }),
    );
    const local = new Client({ name: 'e2e', version: '1.0.0' });
    await local.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [STDIO_ENTRY],
        env: { PATH: process.env.PATH ?? '', SERVICE_URL: t.url, SERVICE_API_KEY: t.admin.key },
        stderr: 'pipe',
      }),
    );
    clients.push(remote, local);
    mcp['Streamable HTTP'] = remote;
    mcp.stdio = local;
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await t?.close();
  });

  const refusedOverRest = (res: ApiResponse): FieldError[] => {
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    return res.body.details.fields;
  };

  /**
   * The tool call's refusal: an isError result naming each bad argument (MCP 2025-11-25,
   * server/tools "Error Handling": input validation errors are tool execution errors), worded
   * `VALIDATION_FAILED: Invalid arguments (field: reason; ...). Correct the arguments and call again.`
   */
  const refusedOverMcp = async (client: Client, name: string, args: Record<string, unknown>): Promise<FieldError[]> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError).toBe(true);
    const text = (result.content[0] as { text: string }).text;
    const listed = /^VALIDATION_FAILED: [^(]*\((.*)\)\. Correct the arguments and call again\.$/s.exec(text);
    expect(listed).not.toBeNull();
    return listed![1].split('; ').map((item) => {
      const colon = item.indexOf(': ');
      return { field: item.slice(0, colon), reason: item.slice(colon + 2) };
    });
  };

  /** A REST field error as the tool reports it: under the argument's name, in the reason too. */
  const asArgument =
    (renames: Record<string, string>) =>
    (error: FieldError): FieldError => {
      const argument = renames[error.field] ?? error.field;
      return {
        field: argument,
        reason: error.reason.startsWith(`${error.field} `) ? `${argument}${error.reason.slice(error.field.length)}` : error.reason,
      };
    };

  const search = (body: unknown) => t.request('POST', `/api/v1/collections/${collectionId}/search`, { body });
  const addFile = (body: unknown) => t.request('POST', `/api/v1/collections/${collectionId}/files`, { body });

  describe.each(['Streamable HTTP', 'stdio'] as const)('REST and MCP over %s', (kind) => {
    const long = 'q'.repeat(8193);

    it.each([
      [
        'a too-long query',
        () => search({ text: long }),
        'service_search_collection',
        () => ({ collection_id: collectionId, query: long }),
        [{ field: 'text', reason: 'text must be shorter than or equal to 8192 characters' }],
      ],
      [
        'an offset over the max',
        () => search({ text: 'x', offset: 1001 }),
        'service_search_collection',
        () => ({ collection_id: collectionId, query: 'x', offset: 1001 }),
        [{ field: 'offset', reason: 'offset must not be greater than 1000' }],
      ],
      [
        'an unknown field',
        () => search({ text: 'x', extra: 1 }),
        'service_search_collection',
        () => ({ collection_id: collectionId, query: 'x', extra: 1 }),
        [{ field: 'extra', reason: 'property extra should not exist' }],
      ],
      [
        'a missing query',
        () => search({ offset: 2 }),
        'service_search_collection',
        () => ({ collection_id: collectionId, offset: 2 }),
        [{ field: 'text', reason: 'is required' }],
      ],
      [
        'a missing name',
        () => addFile({ url: 'https://example.com/a.pdf' }),
        'service_add_file_to_collection',
        () => ({ collection_id: collectionId, url: 'https://example.com/a.pdf' }),
        [{ field: 'name', reason: 'is required' }],
      ],
      [
        'a missing name and url',
        () => addFile({}),
        'service_add_file_to_collection',
        () => ({ collection_id: collectionId }),
        [
          { field: 'name', reason: 'is required' },
          { field: 'url', reason: 'is required' },
        ],
      ],
      [
        'a url that is not one',
        () => addFile({ name: 'a.pdf', url: 'not a url' }),
        'service_add_file_to_collection',
        () => ({ collection_id: collectionId, name: 'a.pdf', url: 'not a url' }),
        [{ field: 'url', reason: 'url must be an absolute URL, e.g. https://example.com/report.pdf' }],
      ],
      [
        'a name too long',
        () => addFile({ name: 'n'.repeat(256), url: 'https://example.com/a.pdf' }),
        'service_add_file_to_collection',
        () => ({ collection_id: collectionId, name: 'n'.repeat(256), url: 'https://example.com/a.pdf' }),
        [{ field: 'name', reason: 'name must be shorter than or equal to 255 characters' }],
      ],
      [
        'a negative offset',
        () => t.request('GET', `/api/v1/collections/${collectionId}/files?offset=-1`),
        'service_list_collection_files',
        () => ({ collection_id: collectionId, offset: -1 }),
        [{ field: 'offset', reason: 'offset must not be less than 0' }],
      ],
      [
        'a blank collection name',
        () => t.request('POST', '/api/v1/collections', { body: { name: '   ' } }),
        'service_create_collection',
        () => ({ name: '   ' }),
        [{ field: 'name', reason: 'name must be longer than or equal to 1 characters' }],
      ],
      [
        'a collection name with control characters',
        () => t.request('POST', '/api/v1/collections', { body: { name: 'bell\u0007name' } }),
        'service_create_collection',
        () => ({ name: 'bell\u0007name' }),
        [{ field: 'name', reason: 'name must not contain control characters' }],
      ],
    ] as const)('refuses %s alike', async (_case, rest, tool, args, expected) => {
      const overRest = refusedOverRest(await rest());
      expect(overRest).toEqual(expected);
      const overMcp = await refusedOverMcp(mcp[kind], tool, args());
      expect(overMcp).toEqual(overRest.map(asArgument({ text: 'query' })));
    });

    it('refuses top_k over its max at the REST door; the tool has no top_k (it returns ten) and says so', async () => {
      expect(refusedOverRest(await search({ text: 'x', top_k: 101 }))).toEqual([
        { field: 'top_k', reason: 'top_k must not be greater than 100' },
      ]);
      // A count may come as a numeric string (the interface's own example sends one), but only a whole one.
      expect(refusedOverRest(await search({ text: 'x', top_k: '7.5' }))).toContainEqual({
        field: 'top_k',
        reason: 'top_k must be an integer number',
      });
      expect((await search({ text: 'x', top_k: '7' })).status).toBe(200);
      expect(await refusedOverMcp(mcp[kind], 'service_search_collection', { collection_id: collectionId, query: 'x', top_k: 5 })).toEqual([
        { field: 'top_k', reason: 'property top_k should not exist' },
      ]);
    });

    it('names a missing id argument once', async () => {
      const refused = await refusedOverMcp(mcp[kind], 'service_delete_file_from_collection', {});
      expect(refused.sort((a, b) => a.field.localeCompare(b.field))).toEqual([
        { field: 'collection_id', reason: 'is required' },
        { field: 'file_id', reason: 'is required' },
      ]);
    });

    it('publishes the limits of the DTOs in tools/list', async () => {
      const { tools } = await mcp[kind].listTools();
      const searchTool = tools.find((tool) => tool.name === 'service_search_collection')!;
      expect(searchTool.inputSchema.properties).toMatchObject({
        query: { type: 'string', minLength: 1, maxLength: 8192 },
        offset: { type: 'number', maximum: 1000 },
      });
      const addTool = tools.find((tool) => tool.name === 'service_add_file_to_collection')!;
      expect(addTool.inputSchema.properties).toMatchObject({
        name: { minLength: 1, maxLength: 255 },
        url: { type: 'string', format: 'uri' },
      });
    });
  });

  describe('one reason per missing field', () => {
    it('in a workflow: an absent definition, and an absent required node parameter', async () => {
      const workflow = (await t.request('POST', '/api/v1/workflows', { body: { name: 'reasons' } })).body;
      expect(refusedOverRest(await t.request('PUT', `/api/v1/workflows/${workflow.id}`, { body: { name: 'renamed' } }))).toEqual([
        { field: 'definition', reason: 'is required' },
      ]);
      const definition = {
        nodes: [
          { id: 'hook', type: 'webhook-trigger', parameters: {} },
          { id: 'call', type: 'http-request', parameters: { method: 'GET' } },
        ],
        edges: [{ from: 'hook', to: 'call' }],
      };
      const fields = refusedOverRest(await t.request('PUT', `/api/v1/workflows/${workflow.id}`, { body: { definition } }));
      expect(fields).toEqual([expect.objectContaining({ field: 'nodes[1].parameters.url', reason: 'is required' })]);
    });

    it('keeps the specific reasons of a field that is present but wrong', async () => {
      const fields = refusedOverRest(await addFile({ name: 42, url: 'https://example.com/a.pdf' }));
      expect(fields.length).toBeGreaterThan(1);
      expect(fields.every((f) => f.field === 'name' && f.reason !== 'is required')).toBe(true);
      expect(fields.map((f) => f.reason)).toContain('name must be a string');
    });

    it('checks the webhook body with its DTO: runType among test and production, input as sent', async () => {
      const workflow = (await t.request('POST', '/api/v1/workflows', { body: { name: 'webhook' } })).body;
      const start = (body: unknown) => t.request('POST', `/api/v1/workflows/${workflow.id}/runs`, { body });
      expect(refusedOverRest(await start({ runType: 'staging' }))).toEqual([
        { field: 'runType', reason: 'runType must be one of the following values: test, production' },
      ]);
      expect(refusedOverRest(await start({ runType: null }))).toEqual([
        { field: 'runType', reason: 'runType must be one of the following values: test, production' },
      ]);
      expect(refusedOverRest(await start({ input: 1, extra: true }))).toEqual([
        { field: 'extra', reason: 'property extra should not exist' },
      ]);
      expect(refusedOverRest(await start([1, 2]))).toEqual([{ field: 'body', reason: 'must be a JSON object' }]);
      expect(refusedOverRest(await start('production'))).toEqual([{ field: 'body', reason: 'must be a JSON object' }]);
      // Keys that look like class-transformer's business, nested arrays and nulls arrive untouched.
      const input = { constructor: 'c', nested: [{ a: null }, [1, '2']], date: '2025-01-01T00:00:00Z' };
      const accepted = await start({ runType: 'test', input });
      expect(accepted.status).toBe(202);
      const run = await t.request('GET', `/api/v1/runs/${accepted.body.runId}`);
      expect(run.body.input).toEqual(input);
    });
  });

  // class-validator checks each element of an array given where one object is expected, and lets
  // null through an optional field as though it were absent: neither may reach the services.
  describe('an array where one object is expected, and null for an optional field', () => {
    const node = { id: 'hook', type: 'webhook-trigger', parameters: {} };
    const create = (body: unknown) => t.request('POST', '/api/v1/workflows', { body });

    it.each([
      ['the definition', { name: 'w', definition: [] }, 'definition', 'definition must be an object'],
      ['the definition, holding one', { name: 'w', definition: [{ nodes: [node] }] }, 'definition', 'definition must be an object'],
      ['the settings', { name: 'w', settings: [{ maxConcurrentRuns: 1 }] }, 'settings', 'settings must be an object'],
      [
        'a rate limit',
        { name: 'w', settings: { rateLimit: [{ requests: 100, perSeconds: 60 }] } },
        'settings.rateLimit',
        'rateLimit must be an object',
      ],
      ['what runs keep', { name: 'w', settings: { stepData: [{ succeeded: 'none' }] } }, 'settings.stepData', 'stepData must be an object'],
      [
        "a node's retry",
        { name: 'w', definition: { nodes: [{ ...node, retry: [{ maxAttempts: 2 }] }] } },
        'definition.nodes[0].retry',
        'retry must be an object',
      ],
      [
        "a node's position",
        { name: 'w', definition: { nodes: [{ ...node, position: [] }] } },
        'definition.nodes[0].position',
        'position must be an object',
      ],
      [
        'a node inside an array',
        { name: 'w', definition: { nodes: [[node]] } },
        'definition.nodes',
        'each value in nodes must be an object',
      ],
    ])('refuses an array as %s, naming it', async (_case, body, field, reason) => {
      expect(refusedOverRest(await create(body))).toContainEqual({ field, reason });
    });

    it('refuses __proto__ as a node id or a variable name, and a chat-completion response schema that is no JSON Schema', async () => {
      const definition = (extra: object) => ({ name: 'w', definition: { nodes: [node], ...extra } });
      expect(
        refusedOverRest(await create(definition({ nodes: [node, { id: '__proto__', type: 'set', parameters: { fields: {} } }] }))),
      ).toContainEqual({
        field: 'definition.nodes[1].id',
        reason: expect.stringMatching(/^id must not be __proto__: /),
      });
      expect(refusedOverRest(await create(definition({ variables: [{ name: '__proto__', type: 'string', value: 'x' }] })))).toContainEqual({
        field: 'definition.variables[0].name',
        reason: expect.stringMatching(/^name must not be __proto__: /),
      });
      const chat = { id: 'ask', type: 'chat-completion', parameters: { prompt: 'hi', responseSchema: { type: 'nope' } } };
      const fields = refusedOverRest(await create(definition({ nodes: [node, chat], edges: [{ from: 'hook', to: 'ask' }] })));
      expect(fields.map((f) => f.field)).toContain('nodes[1].parameters.responseSchema');
    });

    it('refuses an array of settings on PUT, keeping the stored ones', async () => {
      const workflow = (await create({ name: 'kept', settings: { maxConcurrentRuns: 3 } })).body;
      const put = await t.request('PUT', `/api/v1/workflows/${workflow.id}`, { body: { definition: { nodes: [node] }, settings: [] } });
      expect(refusedOverRest(put)).toEqual([{ field: 'settings', reason: 'settings must be an object' }]);
      expect((await t.request('GET', `/api/v1/workflows/${workflow.id}`)).body.settings).toEqual({ maxConcurrentRuns: 3 });
    });

    it('refuses an array as the search rerank options, naming it rather than the reranker', async () => {
      expect(refusedOverRest(await search({ text: 'bees', rerank: [{ enabled: false }] }))).toEqual([
        { field: 'rerank', reason: 'rerank must be an object' },
      ]);
    });

    it('takes null for an optional field as left out: a definition, a limit, a page', async () => {
      const created = await create({ name: 'nulls', definition: null, settings: { maxConcurrentRuns: null, errorWorkflowId: null } });
      expect(created.status).toBe(201);
      expect(created.body.definition.nodes.map((n: { type: string }) => n.type)).toEqual(['webhook-trigger']);
      expect(created.body.settings).toEqual({});
      const files = await mcp['Streamable HTTP'].callTool({
        name: 'service_list_collection_files',
        arguments: { collection_id: collectionId, offset: null },
      });
      expect(files.isError).toBeFalsy();
      expect(files.structuredContent).toMatchObject({ offset: 0, total: 0, nextOffset: null });
    });

    it('refuses an empty filter of a listing rather than list everything', async () => {
      expect(refusedOverRest(await t.request('GET', '/api/v1/runs?workflowId='))).toEqual([
        { field: 'workflowId', reason: 'workflowId must be longer than or equal to 1 characters' },
      ]);
      expect(refusedOverRest(await t.request('GET', `/api/v1/collections/${collectionId}/files?status=`))).toEqual([
        { field: 'status', reason: 'status must name at least one status: leave it out for files in any status' },
      ]);
    });

    it.each(['0x1', '1e0', '-1', '0', '1.0', '9999999999'])('refuses version %s in a path, naming the version', async (version) => {
      const workflow = (await create({ name: 'versions' })).body;
      for (const [method, path] of [
        ['GET', `/api/v1/workflows/${workflow.id}/versions/${version}`],
        ['POST', `/api/v1/workflows/${workflow.id}/versions/${version}/activate`],
      ] as const) {
        const fields = refusedOverRest(await t.request(method, path));
        expect(fields).toEqual([{ field: 'version', reason: expect.stringMatching(/^must be a version number: a whole number from 1/) }]);
      }
    });
  });

  // Nest's pipe deletes keys named constructor or prototype anywhere in a body before validating it,
  // and Fastify answered every JSON it could not parse "Body is not valid JSON", __proto__ keys too.
  describe('prototype keys, and JSON that does not parse', () => {
    const hook = { id: 'hook', type: 'webhook-trigger', parameters: {} };
    const reason = (key: string) => `is a key named "${key}": keys named constructor, prototype or __proto__ are not accepted`;

    it('refuses a key named constructor or prototype in a body or a query, naming it, rather than drop it', async () => {
      const set = { id: 'set', type: 'set', parameters: { fields: { constructor: 'x', kept: 1 } } };
      const created = await t.request('POST', '/api/v1/workflows', {
        body: { name: 'keys', definition: { nodes: [hook, set], edges: [{ from: 'hook', to: 'set' }] } },
      });
      expect(refusedOverRest(created)).toEqual([
        { field: 'definition.nodes[1].parameters.fields.constructor', reason: reason('constructor') },
      ]);
      expect(refusedOverRest(await t.request('POST', '/api/v1/collections', { body: { name: 'c', prototype: {} } }))).toEqual([
        { field: 'prototype', reason: reason('prototype') },
      ]);
      expect(refusedOverRest(await t.request('GET', '/api/v1/workflows?constructor=1'))).toEqual([
        { field: 'constructor', reason: reason('constructor') },
      ]);
    });

    it('says what is wrong with a body that does not parse, and refuses a __proto__ key as such', async () => {
      const post = (rawBody: string) =>
        t.request('POST', '/api/v1/collections', { rawBody, headers: { 'content-type': 'application/json' } });
      const cut = await post('{"name": ');
      expect(cut.status).toBe(400);
      expect(cut.body).toMatchObject({ code: 'MALFORMED_JSON', message: 'Malformed JSON body: Unexpected end of JSON input' });
      const comma = await post('{"name": "a",}');
      expect(comma.body).toMatchObject({ code: 'MALFORMED_JSON', message: expect.stringMatching(/^Malformed JSON body: .*position 13/) });
      const empty = await post('');
      expect(empty.body).toMatchObject({ code: 'MALFORMED_JSON', message: expect.stringContaining('the body is empty') });
      const poisoned = { field: 'body', reason: 'holds a key named "__proto__", or a "constructor" holding "prototype": not accepted' };
      expect(refusedOverRest(await post('{"name": "p", "x": {"__proto__": {"admin": true}}}'))).toEqual([poisoned]);
      expect(refusedOverRest(await post('{"name": "p", "x": {"constructor": {"prototype": {"admin": true}}}}'))).toEqual([poisoned]);
    });
  });

  describe('bodies nested too deep', () => {
    /** `levels` arrays inside each other: `[[[]]]` is 3. */
    const nested = (levels: number): unknown => {
      let value: unknown = [];
      for (let i = 1; i < levels; i++) value = [value];
      return value;
    };

    it('refuses a body deeper than MAX_JSON_DEPTH with a 400 naming the body, on any route, and takes one at the limit', async () => {
      const collection = await t.request('POST', '/api/v1/collections', { body: { name: 'deep', extra: nested(2000) } });
      expect(collection.status).toBe(400);
      expect(collection.body.details.fields).toEqual([{ field: 'body', reason: 'nests deeper than 128 levels of arrays and objects' }]);

      const workflow = (await t.request('POST', '/api/v1/workflows', { body: { name: 'deep input' } })).body;
      await t.request('POST', `/api/v1/workflows/${workflow.id}/publish`);
      const start = (input: unknown) => t.request('POST', `/api/v1/workflows/${workflow.id}/runs`, { body: { runType: 'test', input } });
      // The body is one level: {input: ...}.
      expect(refusedOverRest(await start(nested(128)))).toEqual([
        { field: 'body', reason: 'nests deeper than 128 levels of arrays and objects' },
      ]);
      const accepted = await start(nested(127));
      expect(accepted.status).toBe(202);
      const run = await waitForRun(t.request, accepted.body.runId);
      expect(run.status).toBe('succeeded');
      expect(run.input).toEqual(nested(127));
    });
  });

  describe('media types', () => {
    it('answers a JSON route given another media type with 415 saying what to send', async () => {
      for (const [type, body] of [
        ['text/plain', '{"name":"x"}'],
        ['application/xml', '<name>x</name>'],
        ['application/x-www-form-urlencoded', 'name=x'],
      ]) {
        const res = await t.request('POST', '/api/v1/collections', { rawBody: body, headers: { 'content-type': type } });
        expect(res.status).toBe(415);
        expect(res.body).toMatchObject({
          code: 'UNSUPPORTED_MEDIA_TYPE',
          message: expect.stringContaining('Content-Type: application/json'),
          details: { expected: 'application/json' },
        });
        expect(res.body.message).toContain(type);
      }
      const form = new FormData();
      form.append('name', 'x');
      const multipart = await fetch(`${t.url}/api/v1/collections/${collectionId}/search`, {
        method: 'POST',
        headers: { 'x-api-key': t.admin.key },
        body: form,
      });
      expect(multipart.status).toBe(415);
      expect(((await multipart.json()) as { code: string }).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    });

    it('answers the upload route given JSON with 415 naming multipart/form-data', async () => {
      const res = await t.request('POST', `/api/v1/collections/${collectionId}/files/upload`, { body: { name: 'x' } });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringContaining('multipart/form-data') });
    });

    it('takes the webhook body only as JSON (curl -d sends a form), and JSON with a charset', async () => {
      const workflow = (await t.request('POST', '/api/v1/workflows', { body: { name: 'media' } })).body;
      const form = await t.request('POST', `/api/v1/workflows/${workflow.id}/runs`, {
        rawBody: 'runType=test',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status).toBe(415);
      const json = await t.request('POST', `/api/v1/workflows/${workflow.id}/runs`, {
        rawBody: '{"runType":"test"}',
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(json.status).toBe(202);
    });

    it('lets a POST without a body go without a Content-Type (publish, cancel), and keeps a 404 a 404', async () => {
      const workflow = (await t.request('POST', '/api/v1/workflows', { body: { name: 'bodiless' } })).body;
      const publish = await fetch(`${t.url}/api/v1/workflows/${workflow.id}/publish`, {
        method: 'POST',
        headers: { 'x-api-key': t.admin.key },
      });
      expect(publish.status).toBe(201);
      const started = await t.request('POST', `/api/v1/workflows/${workflow.id}/runs`);
      expect(started.status).toBe(202);
      const cancel = await fetch(`${t.url}/api/v1/runs/${started.body.runId}/cancel`, {
        method: 'POST',
        headers: { 'x-api-key': t.admin.key },
      });
      expect([200, 409]).toContain(cancel.status);
      expect(((await cancel.json()) as { code?: string }).code).not.toBe('UNSUPPORTED_MEDIA_TYPE');
      const nowhere = await t.request('POST', '/api/v1/nowhere', { rawBody: 'x', headers: { 'content-type': 'text/plain' } });
      expect(nowhere.status).toBe(404);
    });
  });
});
