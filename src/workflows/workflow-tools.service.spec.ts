import { AppConfig, loadConfig } from '../config/app-config';
import { MembershipStore } from '../domain/membership-store.port';
import { Role } from '../domain/membership.model';
import { ToolWorkflow, WorkflowStore } from '../domain/workflow-store.port';
import { ApprovalsService } from '../runs/approvals.service';
import { RunsService } from '../runs/runs.service';
import { WorkflowToolEvents, WorkflowToolsService } from './workflow-tools.service';

const principal = { userId: 'usr_1', keyId: null, isAdmin: false };

/** Two workflows whose input schemas share an `$id`, as copies of one workflow do. */
const published: ToolWorkflow[] = ['wfl_a', 'wfl_b'].map((workflowId, i) => ({
  workflowId,
  name: `Lookup ${i}`,
  tool: {
    versionId: `wfv_${i}`,
    inputSchema: {
      $id: 'https://example.com/order.json',
      type: 'object',
      properties: { orderId: { type: 'string' } },
      required: ['orderId'],
    },
  },
}));

function service(toolWorkflows: ToolWorkflow[] = published) {
  let reads = 0;
  const workflows = {
    listTools: async () => (
      reads++,
      toolWorkflows.map((t) => ({ ...t, tool: { ...t.tool, inputSchema: structuredClone(t.tool.inputSchema) } }))
    ),
  };
  const memberships = {
    listForUser: async () => new Map<string, Role>(toolWorkflows.map((t, i) => [t.workflowId, i === 0 ? 'viewer' : 'owner'])),
  };
  const started: string[] = [];
  const runs = {
    startAsViewer: async (_p: unknown, workflowId: string) => (started.push(workflowId), { runId: `run_${started.length}` }),
    waitFor: async (runId: string) => ({ id: runId, status: 'succeeded', output: { ok: true }, error: null }),
  };
  const events = new WorkflowToolEvents();
  const config: AppConfig = loadConfig({});
  const tools = new WorkflowToolsService(
    workflows as unknown as WorkflowStore,
    memberships as unknown as MembershipStore,
    runs as unknown as RunsService,
    {} as ApprovalsService,
    events,
    config,
  );
  return { tools, events, started, reads: () => reads };
}

describe('WorkflowToolsService', () => {
  it('reads the workflow tools once for many listings, and again once one changes here', async () => {
    const { tools, events, reads } = service();
    for (let i = 0; i < 5; i++) expect((await tools.list(principal)).map((t) => t.name)).toEqual(['lookup_0', 'lookup_1']);
    expect(reads()).toBe(1);
    events.changed();
    await tools.list(principal);
    expect(reads()).toBe(2);
    // The stamp compares with what other processes wrote: it always reads.
    await tools.stamp();
    expect(reads()).toBe(3);
  });

  it('checks the arguments of workflows whose schemas share an $id, however often they are compiled', async () => {
    const { tools, events, started } = service();
    for (let round = 0; round < 3; round++) {
      events.changed();
      for (const name of ['lookup_0', 'lookup_1']) {
        expect(await tools.call(principal, name, { orderId: 'o1' })).toMatchObject({ status: 'succeeded' });
        await expect(tools.call(principal, name, { orderId: 7 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      }
    }
    expect(started).toEqual(['wfl_a', 'wfl_b', 'wfl_a', 'wfl_b', 'wfl_a', 'wfl_b']);
  });

  it("gives a name two workflows want to neither, so a workflow shared with the caller cannot take over the caller's own tool", async () => {
    const schema = { type: 'object' };
    const tool = (workflowId: string, name: string, toolName?: string): ToolWorkflow => ({
      workflowId,
      name,
      tool: { versionId: `v_${workflowId}`, inputSchema: schema, ...(toolName ? { name: toolName } : {}) },
    });
    const own = tool('wfl_own000000000000000000001', 'Orders', 'lookup_order');
    // Shared by someone else, named to sort first and to collide, twice over: with the plain name and with the suffixed one.
    const shared = tool('wfl_other00000000000000000002', 'AAA', 'lookup_order');
    const squatter = tool('wfl_squat00000000000000000003', 'AAB', 'lookup_order_000001');
    const { tools, started } = service([shared, squatter, own]);
    const names = (await tools.list(principal)).map((t) => [t.name, t.workflowId]);
    expect(names).toEqual([
      ['lookup_order_000002', shared.workflowId],
      ['lookup_order_000001', squatter.workflowId],
      ['lookup_order_0000000001', own.workflowId],
    ]);
    await expect(tools.call(principal, 'lookup_order', {})).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await tools.call(principal, 'lookup_order_0000000001', {});
    expect(started).toEqual([own.workflowId]);
  });
});
