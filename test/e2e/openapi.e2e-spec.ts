import Ajv, { ValidateFunction } from 'ajv';
import { startTestApp, TestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';
import { addNotes, createCollection, waitForFile } from './collections-files.helpers';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const ERROR_BODY = '#/components/schemas/ErrorBodyDto';

/**
 * The OpenAPI document at /docs/json describes every answer of the API: each operation has a schema
 * for its success (204 aside) and the one error body for its refusals, and real answers of the
 * running app validate against those schemas, strictly: a field the schema does not list fails.
 */
describe('OpenAPI response schemas', () => {
  let t: TestApp;
  let doc: Json;
  let ajv: Ajv;

  beforeAll(async () => {
    t = await startTestApp();
    const res = await t.request('GET', '/docs/json', { key: null });
    expect(res.status).toBe(200);
    doc = res.body;
    ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: 'api', components: strictComponents(doc.components) });
  }, 120_000);
  afterAll(() => t?.close());

  const operations = () =>
    Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => ({
        name: `${method.toUpperCase()} ${path}`,
        operation: item[method] as Json,
      })),
    );

  /** The schema of a response as ajv reads it: the document's components, made strict. */
  const validatorOf = (path: string, method: string, status: string): ValidateFunction => {
    const schema = doc.paths[path][method].responses[status]?.content?.['application/json']?.schema;
    if (!schema) throw new Error(`no JSON schema for ${method} ${path} ${status}`);
    return ajv.compile(strictSchema(schema) as Json);
  };

  const expectValid = (validate: ValidateFunction, body: unknown) => {
    const ok = validate(body);
    if (!ok) throw new Error(`${JSON.stringify(validate.errors, null, 1)}\nfor ${JSON.stringify(body)}`);
  };

  it('gives every operation a schema for its success answer (204 aside)', () => {
    const missing: string[] = [];
    for (const { name, operation } of operations()) {
      const successes = Object.entries(operation.responses as Record<string, Json>).filter(([status]) => /^2/.test(status));
      if (successes.length === 0) missing.push(`${name}: no 2xx response`);
      for (const [status, response] of successes) {
        if (status === '204') continue;
        // JSON for the API; a route answering another media type (text, HTML) describes that one.
        const schema = (Object.values(response.content ?? {})[0] as Json | undefined)?.schema;
        if (!schema || (!schema.$ref && !schema.type && !schema.oneOf && !schema.allOf)) missing.push(`${name}: ${status} has no schema`);
      }
    }
    expect(missing).toEqual([]);
    expect(operations().length).toBeGreaterThan(40);
  });

  it('gives every refusal the one error body', () => {
    const wrong: string[] = [];
    for (const { name, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        if (!/^4/.test(status)) continue;
        if (response.content?.['application/json']?.schema?.$ref !== ERROR_BODY) wrong.push(`${name} ${status}`);
      }
      // Every route behind the API key says it may answer 401.
      if (operation.security?.length && !operation.responses['401']) wrong.push(`${name}: no 401`);
    }
    expect(wrong).toEqual([]);
    expect(doc.paths['/api/v1/collections/{id}/search'].post.responses['415']).toBeDefined();
    expect(doc.paths['/api/v1/workflows/{id}/runs'].post.responses['429']).toBeDefined();
  });

  it('describes the request bodies shared with the MCP tools by their validation rules', () => {
    // A collection's search takes SearchOptionsDto: SearchDto's fields and the filter and ranking options.
    const { SearchOptionsDto: SearchDto, AddFileDto, StartRunDto } = doc.components.schemas;
    expect(SearchDto.properties.text).toMatchObject({ type: 'string', minLength: 1, maxLength: 8192 });
    expect(SearchDto.properties.offset).toMatchObject({ type: 'integer', minimum: 0, maximum: 1000 });
    expect(SearchDto.required).toEqual(['text']);
    expect(AddFileDto.properties.name).toMatchObject({ type: 'string', minLength: 1, maxLength: 255 });
    expect(AddFileDto.required).toEqual(['name', 'url']);
    expect(StartRunDto.properties.runType).toMatchObject({ enum: ['test', 'production'], default: 'production' });
    expect(StartRunDto.required).toBeUndefined();
  });

  it('matches real collection, file and search answers', async () => {
    const collectionId = await createCollection(t, 'Schemas');
    const collection = await t.request('GET', `/api/v1/collections/${collectionId}`);
    expectValid(validatorOf('/api/v1/collections/{id}', 'get', '200'), collection.body);
    expectValid(validatorOf('/api/v1/collections', 'get', '200'), (await t.request('GET', '/api/v1/collections')).body);

    const [fileId] = [...(await addNotes(t, collectionId, 2)).keys()];
    const file = await waitForFile(t, collectionId, fileId);
    expect(file.status).toBe('indexed');
    expectValid(validatorOf('/api/v1/collections/{id}/files/{fileId}', 'get', '200'), file);
    expectValid(
      validatorOf('/api/v1/collections/{id}/files', 'get', '200'),
      (await t.request('GET', `/api/v1/collections/${collectionId}/files`)).body,
    );
    const content = await t.request('GET', `/api/v1/collections/${collectionId}/files/${fileId}/content`);
    expectValid(validatorOf('/api/v1/collections/{id}/files/{fileId}/content', 'get', '200'), content.body);
    const stats = await t.request('GET', `/api/v1/collections/${collectionId}/stats`);
    expectValid(validatorOf('/api/v1/collections/{id}/stats', 'get', '200'), stats.body);

    const search = await t.request('POST', `/api/v1/collections/${collectionId}/search`, {
      body: { text: 'which animal crossed the river?', top_k: '5' },
    });
    expect(search.status).toBe(200);
    expect(search.body.result.length).toBeGreaterThan(0);
    expectValid(validatorOf('/api/v1/collections/{id}/search', 'post', '200'), search.body);

    const refused = await t.request('POST', `/api/v1/collections/${collectionId}/search`, { body: { top_k: 500 } });
    expect(refused.status).toBe(400);
    expectValid(validatorOf('/api/v1/collections/{id}/search', 'post', '400'), refused.body);
  }, 120_000);

  it('matches a real workflow, its versions, and a run record with its steps', async () => {
    const definition = {
      nodes: [
        { id: 'hook', type: 'webhook-trigger', parameters: {} },
        { id: 'big', type: 'if', parameters: { condition: 'item.amount > 100' }, parameterMode: { condition: 'expression' } },
      ],
      edges: [{ from: 'hook', to: 'big' }],
      variables: [
        { name: 'limit', type: 'number', value: 100 },
        { name: 'token', type: 'secret', value: 'sk-openapi-e2e' },
      ],
    };
    const created = await t.request('POST', '/api/v1/workflows', {
      body: { name: 'schemas', definition, settings: { maxConcurrentRuns: 2 } },
    });
    expect(created.status).toBe(201);
    expectValid(validatorOf('/api/v1/workflows', 'post', '201'), created.body);
    const id = created.body.id;
    const published = await t.request('POST', `/api/v1/workflows/${id}/publish`);
    expect(published.status).toBe(201);
    expectValid(validatorOf('/api/v1/workflows/{id}/publish', 'post', '201'), published.body);
    expectValid(
      validatorOf('/api/v1/workflows/{id}/versions', 'get', '200'),
      (await t.request('GET', `/api/v1/workflows/${id}/versions`)).body,
    );
    expectValid(validatorOf('/api/v1/workflows', 'get', '200'), (await t.request('GET', '/api/v1/workflows')).body);

    const accepted = await t.request('POST', `/api/v1/workflows/${id}/runs`, { body: { input: [{ amount: 150 }, { amount: 5 }] } });
    expect(accepted.status).toBe(202);
    expectValid(validatorOf('/api/v1/workflows/{id}/runs', 'post', '202'), accepted.body);
    const record = await waitForRun(t.request, accepted.body.runId);
    expect(record.status).toBe('succeeded');
    expect(record.steps.length).toBe(2);
    expectValid(validatorOf('/api/v1/runs/{id}', 'get', '200'), record);
    expectValid(validatorOf('/api/v1/runs', 'get', '200'), (await t.request('GET', `/api/v1/runs?workflowId=${id}`)).body);

    const waited = await t.request('POST', `/api/v1/workflows/${id}/runs?wait=20`, { body: { runType: 'test', input: [{ amount: 1 }] } });
    expect(waited.status).toBe(200);
    expectValid(validatorOf('/api/v1/workflows/{id}/runs', 'post', '200'), waited.body);

    // The schema is strict: a field it does not list fails, so it cannot silently fall behind the answer.
    expect(validatorOf('/api/v1/runs/{id}', 'get', '200')({ ...record, surprise: true })).toBe(false);
  }, 120_000);
});

/** OpenAPI 3.0 `nullable` as JSON Schema, and objects that list their properties closed to others. */
function strictSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strictSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const { nullable, ...rest } = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key === '$ref') out.$ref = `api${value}`;
    else if (key === 'properties')
      out.properties = Object.fromEntries(Object.entries(value as Json).map(([name, p]) => [name, strictSchema(p)]));
    else out[key] = strictSchema(value);
  }
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return nullable ? { anyOf: [out, { type: 'null' }] } : out;
}

function strictComponents(components: Json): Json {
  return { schemas: Object.fromEntries(Object.entries(components.schemas as Json).map(([name, schema]) => [name, strictSchema(schema)])) };
}
