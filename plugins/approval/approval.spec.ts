import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { isRoutedOutput, isWaitRequest, NodeConfigurationError, NodeHttpClient, NodeUpstreamError } from 'workflow-collection-service/sdk';
import { inputContext, itemContext } from 'workflow-collection-service/sdk/testing';
import approval, { ApprovalParameters } from './index';

const params = (values: Partial<ApprovalParameters> = {}) => Object.assign(new ApprovalParameters(), values);

async function request(out: unknown) {
  const resolved = await out;
  if (!isWaitRequest(resolved)) throw new Error('expected a wait request');
  return resolved;
}

describe('approval node', () => {
  it('waits for a decision until the timeout, showing the summary (never the link) meanwhile and going along timedOut without one', async () => {
    const before = Date.now();
    const out = await request(
      approval.execute(inputContext(params({ summary: 'Ship?', timeout: 2, timeoutUnit: 'hours' }), { input: { order: 1 } })),
    );
    expect(out.until.getTime() - before).toBeGreaterThanOrEqual(2 * 3_600_000);
    expect(out.decision?.pending).toEqual({ status: 'pending', summary: 'Ship?', fields: null, expiresAt: out.until.toISOString() });
    expect(isRoutedOutput(out.output) && out.output.outputs).toEqual({
      timedOut: {
        decision: 'timedOut',
        decidedBy: null,
        decidedAt: null,
        fields: null,
        comment: null,
        summary: 'Ship?',
        expiresAt: out.until.toISOString(),
        input: { order: 1 },
      },
    });
  });

  it('tells the notify URL where to decide, and fails when it refuses', async () => {
    const sent: { url: string; body: string }[] = [];
    const http = (status: number): NodeHttpClient => ({
      fetch: async (url, init) => {
        sent.push({ url, body: String(init?.body) });
        return { status, url, headers: {}, body: Buffer.from('') };
      },
    });
    await request(approval.execute(inputContext(params({ notifyUrl: 'https://chat.example/hook' }), { http: http(204) })));
    expect(JSON.parse(sent[0].body)).toMatchObject({
      summary: 'Approve?',
      approvalUrl: expect.any(String),
      runId: 'run_test',
      nodeId: 'node',
    });
    await expect(approval.execute(inputContext(params({ notifyUrl: 'https://chat.example/hook' }), { http: http(500) }))).rejects.toThrow(
      NodeUpstreamError,
    );
  });

  it('takes one decision for the whole input: run mode item is refused', async () => {
    await expect(approval.execute(itemContext(params(), { item: 1 }))).rejects.toThrow(NodeConfigurationError);
  });

  it('refuses a fields schema that is not an object schema, an unknown unit and a bad notify URL', () => {
    const errors = validateSync(
      plainToInstance(ApprovalParameters, { summary: 'x', fields: { type: 'string' }, timeoutUnit: 'weeks', notifyUrl: 'not a url' }),
    );
    expect(errors.map((e) => e.property).sort()).toEqual(['fields', 'notifyUrl', 'timeoutUnit']);
  });
});
