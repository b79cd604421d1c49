import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { inputContext } from 'workflow-collection-service/sdk/testing';
import mcpTrigger, { McpTriggerParameters } from './index';

const errorsOf = (values: object) => validateSync(plainToInstance(McpTriggerParameters, values)).map((e) => e.property);

function toolOf(params: Partial<McpTriggerParameters>) {
  const trigger = mcpTrigger.trigger;
  if (typeof trigger !== 'object' || !trigger.tool) throw new Error('expected a tool trigger');
  return trigger.tool(Object.assign(new McpTriggerParameters(), params));
}

describe('mcp-trigger node', () => {
  it('offers a tool with its name, description and input schema', () => {
    const inputSchema = { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] };
    expect(toolOf({ toolName: 'lookup_order', description: 'Finds an order', inputSchema })).toEqual({
      name: 'lookup_order',
      description: 'Finds an order',
      inputSchema,
    });
  });

  it('leaves name and description to the workflow when they are not set', () => {
    expect(toolOf({})).toEqual({ inputSchema: { type: 'object', properties: {} } });
  });

  it('outputs the arguments of the call', () => {
    expect(mcpTrigger.execute(inputContext(new McpTriggerParameters(), { input: { orderId: 'o1' } }))).toEqual({ orderId: 'o1' });
  });

  it('refuses a tool name MCP clients cannot call, and a schema that is not of an object', () => {
    expect(errorsOf({ toolName: 'look up' })).toEqual(['toolName']);
    expect(errorsOf({ inputSchema: { type: 'string' } })).toEqual(['inputSchema']);
    expect(errorsOf({ inputSchema: [] })).toEqual(['inputSchema']);
  });
});
