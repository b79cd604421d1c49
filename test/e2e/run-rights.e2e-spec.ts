import { WorkflowScheduler } from '../../src/runs/workflow-scheduler.service';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';
import { createCollection, waitForFile } from './collections-files.helpers';

/**
 * Whose rights a run uses, through the real doors: a run started by a caller acts as the caller,
 * one the service starts (a schedule, an error workflow) as the user who put the version in
 * force; nobody acts as the owner implicitly. And what viewers of a workflow read of its runs.
 */
describe('whose rights a run uses', () => {
  let t: TestApp;
  let embeddings: FakeEmbeddingsServer;
  let editor: TestUser;
  let privateCollection: string;
  const SECRET_TEXT = 'The launch codes are 0000 and only the owner may read them.';

  beforeAll(async () => {
    embeddings = await FakeEmbeddingsServer.start();
    t = await startTestApp({ EMBEDDINGS_URL: embeddings.url });
    editor = await t.createUser('editor');
    // The owner's private collection: the editor holds no role on it.
    privateCollection = await createCollection(t, 'Private');
    const form = new FormData();
    form.append('file', new Blob([SECRET_TEXT], { type: 'text/plain' }), 'codes.txt');
    const upload = await fetch(`${t.url}/api/v1/collections/${privateCollection}/files/upload`, {
      method: 'POST',
      headers: { 'x-api-key': t.admin.key },
      body: form,
    });
    expect(upload.status).toBe(201);
    expect((await waitForFile(t, privateCollection, ((await upload.json()) as { id: string }).id)).status).toBe('indexed');
  });

  afterAll(async () => {
    await t?.close();
    await embeddings?.close();
  });

  /** An owner's workflow shared with the editor, as the escalation report had it. */
  const sharedWorkflow = async (name: string) => {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name } });
    expect(created.status).toBe(201);
    expect((await t.request('PUT', `/api/v1/workflows/${created.body.id}/members/${editor.id}`, { body: { role: 'editor' } })).status).toBe(
      200,
    );
    return created.body.id as string;
  };

  /**
   * schedule-trigger -> list-files(the owner's collection) -> get-file-contents; `viaExpression`
   * names the collection with an expression, which only the run can check.
   */
  const readPrivateOnSchedule = (viaExpression = false) => ({
    nodes: [
      { id: 'tick', type: 'schedule-trigger', parameters: { cron: '*/5 * * * *', timezone: 'UTC' } },
      viaExpression
        ? {
            id: 'list',
            type: 'list-files',
            parameters: { collectionId: `'${privateCollection}'`, offset: '0' },
            parameterMode: { collectionId: 'expression' },
          }
        : { id: 'list', type: 'list-files', parameters: { collectionId: privateCollection, offset: '0' } },
      { id: 'read', type: 'get-file-contents', parameters: {} },
    ],
    edges: [
      { from: 'tick', to: 'list' },
      { from: 'list', to: 'read' },
    ],
  });

  /** The scheduler's ticks at chosen times, years ahead of its own loop: a schedule first seen fires from then on. */
  const tickAt = async (iso: string) => {
    const scheduler = t.app.get(WorkflowScheduler);
    await scheduler.tick(new Date(Date.parse(iso) - 60_000));
    return scheduler.tick(new Date(iso));
  };

  const scheduledRuns = async (workflowId: string) =>
    (await t.request('GET', `/api/v1/runs?workflowId=${workflowId}`)).body.items as Array<{ id: string; trigger: string }>;

  it("refuses the escalation: an editor's scheduled version reads nothing the editor may not read", async () => {
    const workflowId = await sharedWorkflow('nightly report');
    // Named as it is, the collection the editor may not read is refused when the definition is saved.
    const refused = await t.request('PUT', `/api/v1/workflows/${workflowId}`, {
      key: editor.key,
      body: { definition: readPrivateOnSchedule() },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details.fields).toContainEqual(
      expect.objectContaining({
        field: 'nodes[1].parameters.collectionId',
        nodeId: 'list',
        reason: expect.stringContaining(privateCollection),
      }),
    );
    // Named by an expression, the editor replaces the definition and publishes it.
    expect(
      (
        await t.request('PUT', `/api/v1/workflows/${workflowId}`, {
          key: editor.key,
          body: { definition: readPrivateOnSchedule(true) },
        })
      ).status,
    ).toBe(200);
    expect((await t.request('POST', `/api/v1/workflows/${workflowId}/publish`, { key: editor.key })).status).toBe(201);
    expect((await t.request('GET', `/api/v1/workflows/${workflowId}`)).body).toMatchObject({ role: 'owner', activatedBy: editor.id });

    expect(await tickAt('2032-01-01T00:05:00Z')).toBe(1);
    const [started] = await scheduledRuns(workflowId);
    const record = await waitForRun(t.request, started.id);
    expect(record).toMatchObject({
      trigger: 'schedule',
      startedBy: editor.id,
      actingUserId: editor.id,
      status: 'failed',
      error: { nodeId: 'list' },
    });
    expect(JSON.stringify(record)).not.toContain('launch codes');
    expect(record.steps.find((s: { nodeId: string }) => s.nodeId === 'read').status).toBe('skipped');
  });

  it('acts as the owner only when the owner put the version in force, and says who an activation hands it to', async () => {
    const workflowId = await sharedWorkflow('owner report');
    expect((await t.request('PUT', `/api/v1/workflows/${workflowId}`, { body: { definition: readPrivateOnSchedule() } })).status).toBe(200);
    expect((await t.request('POST', `/api/v1/workflows/${workflowId}/publish`)).status).toBe(201);
    expect(await tickAt('2032-02-01T00:05:00Z')).toBeGreaterThanOrEqual(1);
    const owners = await waitForRun(t.request, (await scheduledRuns(workflowId))[0].id);
    expect(owners).toMatchObject({ status: 'succeeded', actingUserId: t.admin.id });
    expect(JSON.stringify(owners.output)).toContain('launch codes');

    // The editor activates the same version again: from now on the schedule acts as the editor.
    expect((await t.request('POST', `/api/v1/workflows/${workflowId}/versions/1/activate`, { key: editor.key })).status).toBe(200);
    expect(await t.app.get(WorkflowScheduler).tick(new Date('2032-02-01T00:10:00Z'))).toBeGreaterThanOrEqual(1);
    const runs = await scheduledRuns(workflowId);
    const editors = await waitForRun(t.request, runs[0].id);
    expect(editors).toMatchObject({ status: 'failed', actingUserId: editor.id });
    expect(JSON.stringify(editors)).not.toContain('launch codes');
  });

  it('fails a scheduled run at its start, naming the user, once they lost the editor role they put the version in force with', async () => {
    const workflowId = await sharedWorkflow('stale schedule');
    const harmless = {
      nodes: [
        { id: 'tick', type: 'schedule-trigger', parameters: { cron: '*/5 * * * *', timezone: 'UTC' } },
        { id: 'shape', type: 'set', parameters: { fields: { ok: true } } },
      ],
      edges: [{ from: 'tick', to: 'shape' }],
    };
    expect((await t.request('PUT', `/api/v1/workflows/${workflowId}`, { key: editor.key, body: { definition: harmless } })).status).toBe(
      200,
    );
    expect((await t.request('POST', `/api/v1/workflows/${workflowId}/publish`, { key: editor.key })).status).toBe(201);
    expect((await t.request('DELETE', `/api/v1/workflows/${workflowId}/members/${editor.id}`)).status).toBe(204);
    expect(await tickAt('2032-03-01T00:05:00Z')).toBeGreaterThanOrEqual(1);
    const record = await waitForRun(t.request, (await scheduledRuns(workflowId))[0].id);
    expect(record.status).toBe('failed');
    expect(record.error.code).toBe('FORBIDDEN');
    expect(record.error.message).toContain(editor.id);
    expect(record.steps).toEqual([]);
  });

  it("starts the error workflow once when a production run fails, as the user who put the error workflow's version in force", async () => {
    const handler = await t.request('POST', '/api/v1/workflows', {
      key: editor.key,
      body: { name: 'on failure', definition: { nodes: [{ id: 'failure', type: 'error-trigger', parameters: {} }], edges: [] } },
    });
    expect((await t.request('POST', `/api/v1/workflows/${handler.body.id}/publish`, { key: editor.key })).status).toBe(201);
    const failing = await t.request('POST', '/api/v1/workflows', {
      key: editor.key,
      body: {
        name: 'fragile',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            { id: 'boom', type: 'stop-and-error', parameters: { message: 'the sky fell' } },
          ],
          edges: [{ from: 'trigger', to: 'boom' }],
        },
        settings: { errorWorkflowId: handler.body.id },
      },
    });
    expect(failing.status).toBe(201);
    expect((await t.request('POST', `/api/v1/workflows/${failing.body.id}/publish`, { key: editor.key })).status).toBe(201);

    const started = await t.request('POST', `/api/v1/workflows/${failing.body.id}/runs`, { key: editor.key, body: {} });
    expect((await waitForRun(t.request, started.body.id, { key: editor.key })).status).toBe('failed');
    let errorRuns: Array<{ id: string; trigger: string }> = [];
    for (
      const deadline = Date.now() + 30_000;
      errorRuns.length === 0 && Date.now() < deadline;
      await new Promise((r) => setTimeout(r, 100))
    ) {
      errorRuns = (await t.request('GET', `/api/v1/runs?workflowId=${handler.body.id}`, { key: editor.key })).body.items;
    }
    expect(errorRuns).toHaveLength(1);
    const record = await waitForRun(t.request, errorRuns[0].id, { key: editor.key });
    expect(record).toMatchObject({ status: 'succeeded', trigger: 'error-workflow', actingUserId: editor.id, workflowName: 'on failure' });
    expect(record.output).toMatchObject({
      workflow: { id: failing.body.id, name: 'fragile' },
      run: { id: started.body.id, trigger: 'webhook' },
      error: { nodeId: 'boom', message: expect.stringContaining('the sky fell') },
    });
    // A test run's failure starts nothing.
    const test = await t.request('POST', `/api/v1/workflows/${failing.body.id}/runs`, { key: editor.key, body: { runType: 'test' } });
    expect((await waitForRun(t.request, test.body.id, { key: editor.key })).status).toBe('failed');
    await new Promise((r) => setTimeout(r, 500));
    expect((await t.request('GET', `/api/v1/runs?workflowId=${handler.body.id}`, { key: editor.key })).body.total).toBe(1);
  });

  it('refuses an error workflow the caller may not run, or the workflow itself', async () => {
    const mine = await t.request('POST', '/api/v1/workflows', { key: editor.key, body: { name: 'mine' } });
    const notMine = await t.request('POST', '/api/v1/workflows', { body: { name: 'not shared' } });
    const refused = await t.request('PUT', `/api/v1/workflows/${mine.body.id}`, {
      key: editor.key,
      body: { definition: mine.body.definition, settings: { errorWorkflowId: notMine.body.id } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details.fields).toEqual([{ field: 'settings.errorWorkflowId', reason: expect.stringContaining('editor role') }]);
    const itself = await t.request('PUT', `/api/v1/workflows/${mine.body.id}`, {
      key: editor.key,
      body: { definition: mine.body.definition, settings: { errorWorkflowId: mine.body.id } },
    });
    expect(itself.status).toBe(400);
    expect(itself.body.details.fields[0].field).toBe('settings.errorWorkflowId');
  });

  it("lets a workflow keep no step data of successful runs, while viewers still read each run's outcome", async () => {
    const viewer = await t.createUser('viewer');
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'quiet',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            { id: 'shape', type: 'set', parameters: { fields: { greeting: 'hello' } } },
          ],
          edges: [{ from: 'trigger', to: 'shape' }],
        },
        settings: { stepData: { succeeded: 'none' } },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.settings.stepData).toEqual({ succeeded: 'none', failed: 'all' });
    await t.request('PUT', `/api/v1/workflows/${created.body.id}/members/${viewer.id}`, { body: { role: 'viewer' } });
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, {
      body: { runType: 'test', input: { private: 'input' } },
    });
    const record = await waitForRun(t.request, started.body.id, { key: viewer.key });
    expect(record.status).toBe('succeeded');
    expect(record.steps.map((s: Record<string, unknown>) => [s.nodeId, s.status, 'input' in s, 'output' in s])).toEqual([
      ['trigger', 'succeeded', false, false],
      ['shape', 'succeeded', false, false],
    ]);
    expect(JSON.stringify(record.steps)).not.toContain('private');
  });

  it('refuses a retry from the failed node when the failed run kept no step data', async () => {
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'forgetful',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            { id: 'shape', type: 'set', parameters: { fields: { a: 1 } } },
            { id: 'boom', type: 'stop-and-error', parameters: { message: 'no' } },
          ],
          edges: [
            { from: 'trigger', to: 'shape' },
            { from: 'shape', to: 'boom' },
          ],
        },
        settings: { stepData: { failed: 'none' } },
      },
    });
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test' } });
    expect((await waitForRun(t.request, started.body.id)).status).toBe('failed');
    const retry = await t.request('POST', `/api/v1/runs/${started.body.id}/retry`, { body: { from: 'failed' } });
    expect(retry.status).toBe(409);
    expect(retry.body.message).toContain('kept no step data');
    expect((await t.request('POST', `/api/v1/runs/${started.body.id}/retry`, { body: { from: 'start' } })).status).toBe(202);
  });

  it('says how each run started and which workflow it belongs to, and answers the webhook with the run id', async () => {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'labelled' } });
    const fromConsole = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, {
      body: { runType: 'test' },
      headers: { 'x-run-source': 'console' },
    });
    expect(fromConsole.status).toBe(202);
    expect(fromConsole.body).toMatchObject({ id: fromConsole.body.runId, status: 'queued' });
    const plain = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test' } });
    await waitForRun(t.request, fromConsole.body.id);
    await waitForRun(t.request, plain.body.id);
    const list = await t.request('GET', `/api/v1/runs?workflowId=${created.body.id}`);
    expect(list.body.items.map((r: Record<string, unknown>) => [r.id, r.trigger, r.workflowName])).toEqual([
      [plain.body.id, 'webhook', 'labelled'],
      [fromConsole.body.id, 'console', 'labelled'],
    ]);
    expect(list.body.items[0].durationMs).toEqual(expect.any(Number));
  });
});
