import { startTestApp, TestApp, TestUser } from '../utils/test-app';

/**
 * What starting a run reads is kept where it cannot go stale (a published version's plan and node
 * types, by the version's id, which never changes) and read afresh where it can (which version is
 * active, the caller's role): a version published or a role removed a moment ago counts for the
 * very next call, through the webhook and through chat.
 */
describe("what a run's start reads, kept and read again", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const replying = (trigger: 'webhook-trigger' | 'chat-trigger', answer: string) => ({
    nodes: [
      { id: 'start', type: trigger, parameters: {} },
      { id: 'reply', type: 'code', parameters: { code: `return { answer: ${JSON.stringify(answer)} };` } },
    ],
    edges: [{ from: 'start', to: 'reply' }],
  });

  async function published(name: string, definition: object): Promise<string> {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name, definition } });
    expect(created.status).toBe(201);
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    return created.body.id;
  }

  async function republish(workflowId: string, definition: object): Promise<void> {
    expect((await t.request('PUT', `/api/v1/workflows/${workflowId}`, { body: { definition } })).status).toBe(200);
    expect((await t.request('POST', `/api/v1/workflows/${workflowId}/publish`)).status).toBe(201);
  }

  const webhook = (workflowId: string, key?: string) =>
    t.request('POST', `/api/v1/workflows/${workflowId}/runs?wait=20`, { key, body: { input: {} } });

  const chat = (workflowId: string, key?: string) =>
    t.request('POST', `/api/v1/workflows/${workflowId}/chat?stream=false`, { key, body: { sessionId: 's', message: 'hi' } });

  const member = (workflowId: string, user: TestUser, role: 'editor' | null) =>
    role
      ? t.request('PUT', `/api/v1/workflows/${workflowId}/members/${user.id}`, { body: { role } })
      : t.request('DELETE', `/api/v1/workflows/${workflowId}/members/${user.id}`);

  it("runs the version published a moment ago on the webhook's next call", async () => {
    const id = await published('republished webhook', replying('webhook-trigger', 'first'));
    const first = await webhook(id);
    expect(first.body).toMatchObject({ status: 'succeeded', version: 1, output: { answer: 'first' } });
    await republish(id, replying('webhook-trigger', 'second'));
    const second = await webhook(id);
    expect(second.body).toMatchObject({ status: 'succeeded', version: 2, output: { answer: 'second' } });
    // Rolled back: the first version, whose plan was kept, runs again.
    expect((await t.request('POST', `/api/v1/workflows/${id}/versions/1/activate`)).status).toBe(200);
    expect((await webhook(id)).body).toMatchObject({ version: 1, output: { answer: 'first' } });
  }, 30_000);

  it('chats with the version published a moment ago, and refuses at once when it no longer starts with a chat-trigger', async () => {
    const id = await published('republished chat', replying('chat-trigger', 'first'));
    expect((await chat(id)).body).toMatchObject({ status: 'succeeded', answer: 'first' });
    await republish(id, replying('webhook-trigger', 'hooked'));
    const refused = await chat(id);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/published version 2 starts with webhook-trigger, not chat-trigger/);
    await republish(id, replying('chat-trigger', 'third'));
    expect((await chat(id)).body).toMatchObject({ status: 'succeeded', answer: 'third' });
  }, 30_000);

  it('refuses a user whose role was removed a moment ago, on the webhook and in chat, and starts no run', async () => {
    const hookId = await published('rights webhook', replying('webhook-trigger', 'ok'));
    const chatId = await published('rights chat', replying('chat-trigger', 'ok'));
    const user = await t.createUser('soon without a role');
    for (const id of [hookId, chatId]) expect((await member(id, user, 'editor')).status).toBe(200);
    expect((await webhook(hookId, user.key)).body).toMatchObject({ status: 'succeeded' });
    expect((await chat(chatId, user.key)).body).toMatchObject({ status: 'succeeded' });
    const runs = async () =>
      (await t.request('GET', `/api/v1/runs?workflowId=${hookId}&limit=100`)).body.total +
      (await t.request('GET', `/api/v1/runs?workflowId=${chatId}&limit=100`)).body.total;
    const before = await runs();

    for (const id of [hookId, chatId]) expect((await member(id, user, null)).status).toBe(204);
    expect((await webhook(hookId, user.key)).status).toBe(404);
    expect((await chat(chatId, user.key)).status).toBe(404);
    expect(await runs()).toBe(before);
  }, 30_000);
});
