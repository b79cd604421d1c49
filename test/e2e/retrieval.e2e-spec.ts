import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { buildPdf } from '../fixtures/pdf-builder';
import { FakeEmbeddingsServer, hashVector } from '../utils/fake-embeddings-server';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';
import { createCollection, waitForFile } from './collections-files.helpers';

/**
 * Metadata on files, filters on search and search across collections, over real HTTP, MCP and a
 * workflow node. Embeddings come from a local fake (a deterministic vector per text), so a query
 * equal to a note's text finds that note at distance 0 and the other notes far away.
 */
describe('retrieval: metadata, filters, search across collections', () => {
  let t: TestApp;
  let embeddings: FakeEmbeddingsServer;
  let library: string;
  const notes = new Map<string, { id: string; text: string }>();

  const dataUrl = (text: string) => `data:text/plain;base64,${Buffer.from(text).toString('base64')}`;
  const addNote = async (collectionId: string, name: string, text: string, metadata?: unknown, key?: string) =>
    t.request('POST', `/api/v1/collections/${collectionId}/files`, { body: { name, url: dataUrl(text), metadata }, key });
  const search = (collectionId: string, body: unknown, key?: string) =>
    t.request('POST', `/api/v1/collections/${collectionId}/search`, { body, key });
  const uploadForm = async (collectionId: string, fields: Record<string, string>, text: string) => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from(text)], { type: 'text/plain' }), 'upload.txt');
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    const res = await fetch(`${t.url}/api/v1/collections/${collectionId}/files/upload`, {
      method: 'POST',
      headers: { 'x-api-key': t.admin.key },
      body: form,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    embeddings = await FakeEmbeddingsServer.start();
    t = await startTestApp({ EMBEDDINGS_URL: embeddings.url, JOB_CONCURRENCY: '4' });
    library = await createCollection(t, 'Library');
    const specs = [
      { name: 'contract-2021.txt', text: 'The lease runs for five years.', metadata: { kind: 'contract', year: 2021, tags: ['lease'] } },
      {
        name: 'contract-2023.txt',
        text: 'The lease renews each spring.',
        metadata: { kind: 'contract', year: 2023, tags: ['lease', 'renewal'] },
      },
      { name: 'memo-2023.txt', text: 'Lunch moves to the second floor.', metadata: { kind: 'memo', year: 2023, draft: true } },
      { name: 'untagged.txt', text: 'Nothing is attached to this note.' },
    ];
    for (const spec of specs) {
      const res = await addNote(library, spec.name, spec.text, spec.metadata);
      expect(res.status).toBe(201);
      expect(res.body.metadata).toEqual(spec.metadata ?? {});
      notes.set(spec.name, { id: res.body.id, text: spec.text });
    }
    for (const { id } of notes.values()) expect((await waitForFile(t, library, id)).status).toBe('indexed');
  });

  afterAll(async () => {
    await t?.close();
    await embeddings?.close();
  });

  describe('metadata', () => {
    it('is given at upload as a JSON form field, dates kept as UTC ISO text', async () => {
      const res = await uploadForm(library, { metadata: JSON.stringify({ received: '2024-05-01', owner: 'ada' }) }, 'An uploaded note.');
      expect(res.status).toBe(201);
      expect(res.body.metadata).toEqual({ received: '2024-05-01T00:00:00.000Z', owner: 'ada' });
      await t.request('DELETE', `/api/v1/collections/${library}/files/${res.body.id}`);
    });

    it("holds the fields its format carries, a PDF's pages, title and author, which filters take", async () => {
      const reports = await createCollection(t, 'Reports');
      const pdf = buildPdf([['Lava reached the sea at dawn.'], ['The survey ends here.']], {
        info: { title: 'Field Notes', author: 'A. Surveyor' },
      });
      const added = await t.request('POST', `/api/v1/collections/${reports}/files`, {
        body: { name: 'notes.pdf', url: `data:application/pdf;base64,${pdf.toString('base64')}` },
      });
      expect(added.status).toBe(201);
      const plain = await addNote(reports, 'plain.txt', 'Lava reached the sea at dawn.');
      for (const id of [added.body.id, plain.body.id]) expect((await waitForFile(t, reports, id)).status).toBe('indexed');
      const file = await t.request('GET', `/api/v1/collections/${reports}/files/${added.body.id}`);
      expect(file.body).toMatchObject({ type: 'application/pdf', pages: 2, title: 'Field Notes', author: 'A. Surveyor' });
      const cases: [unknown, string[]][] = [
        [{ field: 'title', eq: 'Field Notes' }, [added.body.id]],
        [{ field: 'author', in: ['A. Surveyor', 'B. Other'] }, [added.body.id]],
        [{ field: 'pages', gte: 2 }, [added.body.id]],
        [{ field: 'title', exists: false }, [plain.body.id]],
      ];
      for (const [filter, ids] of cases) {
        const res = await search(reports, { text: 'Lava reached the sea at dawn.', top_k: 10, filter });
        expect(res.status).toBe(200);
        expect([...new Set(res.body.result.map((h: any) => h.fileId))]).toEqual(ids);
        const listed = await t.request('GET', `/api/v1/collections/${reports}/files?filter=${encodeURIComponent(JSON.stringify(filter))}`);
        expect(listed.body.items.map((f: any) => f.id)).toEqual(ids);
      }
      await t.request('DELETE', `/api/v1/collections/${reports}`);
    });

    it('is refused with a 400 naming the field and the reason, and nothing is stored', async () => {
      const before = (await t.request('GET', `/api/v1/collections/${library}/files`)).body.total;
      const cases: [unknown, RegExp][] = [
        [{ author: { first: 'Ada' } }, /metadata\.author/],
        [{ 'bad key': 1 }, /metadata\.bad key/],
        [{ size: Infinity }, /metadata/],
        [{ tags: ['ok', 7] }, /metadata\.tags\[1\]/],
        [Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])), /metadata/],
        [{ text: 'x'.repeat(1025) }, /metadata\.text/],
        ['not an object', /metadata/],
      ];
      for (const [metadata, field] of cases) {
        const res = await addNote(library, 'refused.txt', 'refused', metadata);
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body)).toMatch(field);
      }
      const badForm = await uploadForm(library, { metadata: '{not json' }, 'x');
      expect(badForm.status).toBe(400);
      expect(JSON.stringify(badForm.body)).toMatch(/metadata.*not valid JSON/);
      expect((await t.request('GET', `/api/v1/collections/${library}/files`)).body.total).toBe(before);
    });

    it('is changed by PATCH as a merge patch, without re-embedding, and a viewer may not change it', async () => {
      const { id } = notes.get('memo-2023.txt')!;
      const embedCalls = embeddings.requests.length;
      const res = await t.request('PATCH', `/api/v1/collections/${library}/files/${id}`, {
        body: { metadata: { draft: null, reviewed: true, tags: ['office'] } },
      });
      expect(res.status).toBe(200);
      expect(res.body.metadata).toEqual({ kind: 'memo', year: 2023, reviewed: true, tags: ['office'] });
      expect((await t.request('GET', `/api/v1/collections/${library}/files/${id}`)).body.metadata).toEqual(res.body.metadata);
      expect(embeddings.requests.length).toBe(embedCalls);
      // The next search sees the change at once.
      const found = await search(library, { text: notes.get('memo-2023.txt')!.text, filter: { field: 'metadata.reviewed', eq: true } });
      expect(found.body.result.map((h: any) => h.fileId)).toEqual([id]);

      const bad = await t.request('PATCH', `/api/v1/collections/${library}/files/${id}`, { body: { metadata: { nested: { a: 1 } } } });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toMatch(/metadata\.nested/);

      const viewer = await t.createUser('patch-viewer');
      await t.request('PUT', `/api/v1/collections/${library}/members/${viewer.id}`, { body: { role: 'viewer' } });
      const refused = await t.request('PATCH', `/api/v1/collections/${library}/files/${id}`, {
        body: { metadata: { reviewed: false } },
        key: viewer.key,
      });
      expect(refused.status).toBe(403);
    });
  });

  describe('filters', () => {
    const idsOf = (body: any) => new Set<string>(body.result.map((h: any) => h.fileId));
    const id = (name: string) => notes.get(name)!.id;

    it('keeps only hits of files the filter keeps: equality, in, ranges, exists, lists, and/or/not', async () => {
      const query = notes.get('contract-2021.txt')!.text;
      const cases: [unknown, string[]][] = [
        [{ field: 'metadata.kind', eq: 'contract' }, ['contract-2021.txt', 'contract-2023.txt']],
        [{ field: 'metadata.year', gte: 2022 }, ['contract-2023.txt', 'memo-2023.txt']],
        [{ field: 'metadata.year', gt: 2020, lt: 2022 }, ['contract-2021.txt']],
        [{ field: 'metadata.tags', eq: 'renewal' }, ['contract-2023.txt']],
        [{ field: 'metadata.kind', in: ['memo', 'letter'] }, ['memo-2023.txt']],
        [{ field: 'metadata.kind', exists: false }, ['untagged.txt']],
        [{ not: { field: 'metadata.kind', eq: 'contract' } }, ['memo-2023.txt', 'untagged.txt']],
        [
          {
            or: [
              { field: 'id', eq: id('untagged.txt') },
              { field: 'metadata.year', eq: 2021 },
            ],
          },
          ['contract-2021.txt', 'untagged.txt'],
        ],
        [
          {
            and: [
              { field: 'type', eq: 'text/plain' },
              { field: 'name', in: ['memo-2023.txt'] },
            ],
          },
          ['memo-2023.txt'],
        ],
        [{ field: 'createdAt', gte: '2000-01-01' }, [...notes.keys()]],
        [{ field: 'metadata.year', eq: '2021' }, []],
      ];
      for (const [filter, names] of cases) {
        const res = await search(library, { text: query, top_k: 10, filter });
        expect(res.status).toBe(200);
        expect([...idsOf(res.body)].sort()).toEqual(names.map(id).sort());
      }
    });

    it('refuses a bad filter with a 400 naming the place and the reason', async () => {
      const cases: [unknown, RegExp][] = [
        [{ field: 'metadata.year', gte: true }, /filter\.gte/],
        [{ field: 'size', eq: 'big' }, /filter\.eq.*number/],
        [{ field: 'colour', eq: 'red' }, /filter\.field/],
        [{ and: [] }, /filter\.and/],
        [{ and: [{ field: 'name', eq: 'a', in: ['b'] }] }, /filter\.and\[0\]/],
        [{ field: 'name', regex: '.*' }, /filter\.regex/],
        [{ field: 'createdAt', gte: 'yesterday' }, /ISO 8601/],
        [JSON.parse('{"not":'.repeat(12) + '{"field":"name","eq":"a"}' + '}'.repeat(12)), /deeper/],
        [{ or: Array.from({ length: 100 }, () => ({ field: 'name', eq: 'a' })) }, /at most 64/],
      ];
      for (const [filter, message] of cases) {
        const res = await search(library, { text: 'lease', filter });
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body)).toMatch(message);
      }
    });

    it('filters listing files the same way', async () => {
      const filter = encodeURIComponent(JSON.stringify({ field: 'metadata.kind', eq: 'contract' }));
      const res = await t.request('GET', `/api/v1/collections/${library}/files?filter=${filter}`);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(2);
      expect(res.body.items.map((f: any) => f.name)).toEqual(['contract-2021.txt', 'contract-2023.txt']);
      const bad = await t.request('GET', `/api/v1/collections/${library}/files?filter=${encodeURIComponent('{nope')}`);
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toMatch(/filter/);
    });

    it('caps hits per file and drops hits under the minimum score', async () => {
      const query = notes.get('contract-2021.txt')!.text;
      const all = await search(library, { text: query, top_k: 10 });
      expect(all.body.result.length).toBe(notes.size);
      const close = await search(library, { text: query, top_k: 10, min_score: 0.99 });
      expect(close.body.result.map((h: any) => h.fileId)).toEqual([id('contract-2021.txt')]);
      // A file of several passages: uncapped, more than one of them is found; capped, one.
      const paragraphs = ['alpha', 'beta', 'gamma'].map((word) => `${word} `.repeat(220).trim());
      const long = await addNote(library, 'long.txt', paragraphs.join('\n\n'));
      expect((await waitForFile(t, library, long.body.id)).status).toBe('indexed');
      const ofLong = (body: any) => body.result.filter((h: any) => h.fileId === long.body.id).length;
      expect(ofLong((await search(library, { text: query, top_k: 20 })).body)).toBeGreaterThan(1);
      const perFile = await search(library, { text: query, top_k: 20, per_file: 1 });
      expect(ofLong(perFile.body)).toBe(1);
      const files = perFile.body.result.map((h: any) => h.fileId);
      expect(new Set(files).size).toBe(files.length);
      await t.request('DELETE', `/api/v1/collections/${library}/files/${long.body.id}`);
      const mmr = await search(library, { text: query, top_k: 3, mmr_lambda: 0.5 });
      expect(mmr.status).toBe(200);
      expect(mmr.body.result[0].fileId).toBe(id('contract-2021.txt'));
      expect(mmr.body.result).toHaveLength(3);
      expect((await search(library, { text: query, mmr_lambda: 2 })).status).toBe(400);
    });

    it('takes the filter in the collection-search node', async () => {
      const definition = {
        nodes: [
          { id: 'trigger', type: 'webhook-trigger', parameters: {} },
          {
            id: 'search',
            type: 'search-collection',
            parameters: {
              collectionId: library,
              query: notes.get('contract-2021.txt')!.text,
              filter: { field: 'metadata.year', eq: 2023 },
            },
          },
        ],
        edges: [{ from: 'trigger', to: 'search' }],
      };
      const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'filtered search', definition } });
      expect(created.status).toBe(201);
      const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test', input: {} } });
      expect(started.status).toBe(202);
      const run = await waitForRun(t.request, started.body.runId);
      expect(run.status).toBe('succeeded');
      const hits = JSON.stringify(run);
      expect(hits).toContain(id('contract-2023.txt'));
      expect(hits).toContain(id('memo-2023.txt'));
      expect(hits).not.toContain(id('contract-2021.txt'));
    });
  });

  describe('across collections', () => {
    let small: string;
    let secret: string;
    let reader: TestUser;
    let smallNoteId: string;
    const query = 'where is the meeting';

    const cosine = (a: number[], b: number[]) => {
      let dot = 0;
      let na = 0;
      let nb = 0;
      for (let i = 0; i < a.length; i++) [dot, na, nb] = [dot + a[i] * b[i], na + a[i] * a[i], nb + b[i] * b[i]];
      return dot / Math.sqrt(na * nb);
    };

    beforeAll(async () => {
      reader = await t.createUser('reader');
      small = await createCollection(t, 'Small');
      secret = await createCollection(t, 'Secret');
      await t.request('PUT', `/api/v1/collections/${library}/members/${reader.id}`, { body: { role: 'viewer' } });
      await t.request('PUT', `/api/v1/collections/${small}/members/${reader.id}`, { body: { role: 'viewer' } });
      // The library gets 30 more notes; the small collection one note whose own match is worse, by
      // raw distance, than the library's three best: merged by distance it would be crowded out.
      const q = hashVector(query, embeddings.dimension);
      const large = Array.from({ length: 30 }, (_, i) => `Library filler note ${i}.`);
      const third = large.map((text) => cosine(q, hashVector(text, embeddings.dimension))).sort((a, b) => b - a)[2];
      let smallText = '';
      for (let i = 0; !smallText; i++) {
        const text = `Small collection note ${i}.`;
        if (cosine(q, hashVector(text, embeddings.dimension)) < third) smallText = text;
      }
      const added = [] as string[];
      for (const [i, text] of large.entries()) added.push((await addNote(library, `filler-${i}.txt`, text)).body.id);
      smallNoteId = (await addNote(small, 'small.txt', smallText)).body.id;
      const secretNote = (await addNote(secret, 'secret.txt', 'Secret plans.')).body.id;
      for (const fileId of added) await waitForFile(t, library, fileId);
      await waitForFile(t, small, smallNoteId);
      await waitForFile(t, secret, secretNote);
    });

    it('ranks fairly: the small collection’s best match comes within the first two, each hit naming its collection', async () => {
      const alone = await search(library, { text: query, top_k: 3 });
      const smallAlone = await search(small, { text: query, top_k: 1 });
      // The premise: by raw distance the library's three best all beat the small collection's best.
      expect(alone.body.result[2].distance).toBeLessThan(smallAlone.body.result[0].distance);

      const res = await t.request('POST', '/api/v1/search', { body: { text: query, top_k: 3, collection_ids: [library, small] } });
      expect(res.status).toBe(200);
      expect(res.body.result).toHaveLength(3);
      expect(res.body.result.slice(0, 2).map((h: any) => h.fileId)).toContain(smallNoteId);
      for (const hit of res.body.result) expect([library, small]).toContain(hit.collectionId);
      expect(res.body.result.find((h: any) => h.fileId === smallNoteId).collectionId).toBe(small);
    });

    it('refuses, by name, a collection the caller cannot read, searching nothing; all means the readable ones', async () => {
      const calls = embeddings.requests.length;
      const refused = await t.request('POST', '/api/v1/search', {
        body: { text: query, collection_ids: [library, secret] },
        key: reader.key,
      });
      expect(refused.status).toBe(404);
      expect(JSON.stringify(refused.body)).toContain(secret);
      expect(embeddings.requests.length).toBe(calls);

      const all = await t.request('POST', '/api/v1/search', { body: { text: 'Secret plans.', all: true, top_k: 50 }, key: reader.key });
      expect(all.status).toBe(200);
      const collections = new Set(all.body.result.map((h: any) => h.collectionId));
      expect(collections.has(secret)).toBe(false);
      expect([...collections].sort()).toEqual([library, small].sort());

      expect((await t.request('POST', '/api/v1/search', { body: { text: query } })).status).toBe(400);
      expect((await t.request('POST', '/api/v1/search', { body: { text: query, all: true, collection_ids: [small] } })).status).toBe(400);
    });

    it('is offered over MCP (v2 client): the search tool takes a filter, service_search_collections searches several', async () => {
      const client = new V2Client({ name: 'retrieval-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(
        new V2Transport(new URL('/mcp', t.url), { requestInit: { headers: { authorization: `Bearer ${reader.key}` } } }),
      );
      try {
        const { tools } = await client.listTools();
        const multi = tools.find((tool) => tool.name === 'service_search_collections');
        expect(multi).toMatchObject({ title: 'Search several collections', annotations: { readOnlyHint: true } });
        expect(multi?.outputSchema).toBeDefined();
        expect(multi?.icons?.length).toBeGreaterThan(0);
        const single = tools.find((tool) => tool.name === 'service_search_collection')!;
        expect(single.inputSchema.required).toEqual(['collection_id', 'query']);
        expect(Object.keys(single.inputSchema.properties ?? {})).toContain('filter');

        const filtered = (await client.callTool({
          name: 'service_search_collection',
          arguments: {
            collection_id: library,
            query: notes.get('contract-2021.txt')!.text,
            filter: { field: 'metadata.kind', eq: 'contract' },
          },
        })) as any;
        expect(filtered.isError).toBeFalsy();
        expect(new Set(filtered.structuredContent.result.map((h: any) => h.fileId))).toEqual(
          new Set([notes.get('contract-2021.txt')!.id, notes.get('contract-2023.txt')!.id]),
        );

        const across = (await client.callTool({
          name: 'service_search_collections',
          arguments: { collection_ids: [library, small], query },
        })) as any;
        expect(across.isError).toBeFalsy();
        expect(across.structuredContent.result.slice(0, 2).map((h: any) => h.fileId)).toContain(smallNoteId);

        const refused = (await client.callTool({
          name: 'service_search_collections',
          arguments: { collection_ids: [secret], query },
        })) as any;
        expect(refused.isError).toBe(true);
        expect(JSON.stringify(refused.content)).toContain(secret);

        const badFilter = (await client.callTool({
          name: 'service_search_collection',
          arguments: { collection_id: library, query, filter: { field: 'metadata.year', gte: true } },
        })) as any;
        expect(badFilter.isError).toBe(true);
        expect(JSON.stringify(badFilter.content)).toMatch(/filter\.gte/);
      } finally {
        await client.close();
      }
    });
  });

  describe('hybrid search', () => {
    /** Cosine distance of two fake embeddings, as the service computes it. */
    const distance = (a: string, b: string) => {
      const [x, y] = [hashVector(a, embeddings.dimension), hashVector(b, embeddings.dimension)];
      let [dot, xx, yy] = [0, 0, 0];
      for (let i = 0; i < x.length; i++) [dot, xx, yy] = [dot + x[i] * y[i], xx + x[i] * x[i], yy + y[i] * y[i]];
      return 1 - dot / Math.sqrt(xx * yy);
    };
    /** What the embeddings endpoint was asked to embed while `act` ran. */
    const embeddedDuring = async <T>(act: () => Promise<T>): Promise<{ value: T; inputs: unknown[] }> => {
      const before = embeddings.requests.length;
      const value = await act();
      return { value, inputs: embeddings.requests.slice(before).flatMap((r) => r.body?.input as unknown[]) };
    };

    it('gives a passage only BM25 found the distance of its stored window, embedding the query alone', async () => {
      const collection = await createCollection(t, 'Keywords');
      // More passages than fusion takes from the vector ranking (50), so that one can be missed by it.
      const ids: string[] = [];
      for (let i = 0; i < 56; i++) ids.push((await addNote(collection, `filler-${i}.txt`, `Filler note number ${i}.`)).body.id);
      const zebraText = 'The zebra grazes by the river.';
      const zebra = (await addNote(collection, 'zebra.txt', zebraText)).body.id as string;
      for (const fileId of [...ids, zebra]) expect((await waitForFile(t, collection, fileId)).status).toBe('indexed');

      // A query whose fake embedding puts the zebra note past the 50 nearest: BM25 alone finds it.
      let query = '';
      let byVector: any;
      // Numbers past the fillers' own, so that BM25 matches the zebra note alone.
      for (let n = 100; n < 300; n++) {
        query = `zebra ${n}`;
        const all = (await search(collection, { text: query, top_k: 100 })).body.result;
        const rank = all.findIndex((hit: any) => hit.fileId === zebra);
        if (rank >= 50) {
          byVector = all[rank];
          break;
        }
      }
      expect(byVector).toBeDefined();

      const { value: hybrid, inputs } = await embeddedDuring(() => search(collection, { text: query, top_k: 5, mode: 'hybrid' }));
      expect(hybrid.status).toBe(200);
      const found = hybrid.body.result.find((hit: any) => hit.fileId === zebra);
      expect(found).toBeDefined();
      // The distance a vector search gives it, and the one embedding the passage again gave before:
      // the note is one passage of one window, its text.
      expect(found.distance).toBeCloseTo(byVector.distance, 6);
      expect(found.distance).toBeCloseTo(distance(query, zebraText), 5);
      expect(inputs).toEqual([query]);

      const diverse = await embeddedDuring(() => search(collection, { text: query, top_k: 5, mode: 'hybrid', mmr_lambda: 0.5 }));
      expect(diverse.value.status).toBe(200);
      expect(diverse.value.body.result).toHaveLength(5);
      const again = diverse.value.body.result.find((hit: any) => hit.fileId === zebra);
      if (again) expect(again.distance).toBeCloseTo(byVector.distance, 6);
      expect(diverse.inputs).toEqual([query]);
    });
  });
});
