import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { McpClients, McpToolResult, NodeConfigurationError, NodeUpstreamError } from 'workflow-collection-service/sdk';
import { inputContext } from 'workflow-collection-service/sdk/testing';
import mcpClient, { McpClientParameters } from './index';
import { mcpToolOptions } from './mcp-client.parameters';

const weather = {
  name: 'get_weather',
  description: 'Weather of a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** A server answering every call with `answer`, its text joined as the service's MCP client joins it. */
function server(answer: Omit<McpToolResult, 'text'>) {
  const calls: { name: string; args: unknown }[] = [];
  const connected: unknown[] = [];
  let closed = 0;
  const mcp: McpClients = {
    async connect(ref) {
      connected.push(ref);
      return {
        listTools: async () => [weather],
        callTool: async (name, args) => {
          calls.push({ name, args });
          const text = answer.content
            .flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []))
            .join('\n');
          return { ...answer, text };
        },
        close: async () => void closed++,
      };
    },
  };
  return { mcp, calls, connected, closed: () => closed };
}

const params = (values: Record<string, unknown>) =>
  plainToInstance(McpClientParameters, { url: 'https://mcp.example.com/mcp', tool: 'get_weather', ...values });

describe('mcp-client node', () => {
  it('calls the tool with its arguments and outputs the structured content, closing the session', async () => {
    const fake = server({ content: [{ type: 'text', text: '{"temp":21}' }], structuredContent: { temp: 21 }, isError: false });
    const output = await mcpClient.execute(
      inputContext(params({ credential: 'crd_abc', arguments: { city: 'Paris' } }), { mcp: fake.mcp }),
    );
    expect(output).toEqual({ temp: 21 });
    expect(fake.connected).toEqual([{ url: 'https://mcp.example.com/mcp', credential: 'crd_abc' }]);
    expect(fake.calls).toEqual([{ name: 'get_weather', args: { city: 'Paris' } }]);
    expect(fake.closed()).toBe(1);
  });

  it('outputs the text content when there is no structured content', async () => {
    const fake = server({
      content: [
        { type: 'text', text: 'sunny' },
        { type: 'image', data: 'x' },
      ],
      isError: false,
    });
    expect(await mcpClient.execute(inputContext(params({ arguments: { city: 'Paris' } }), { mcp: fake.mcp }))).toEqual({ text: 'sunny' });
  });

  it('refuses arguments the input schema refuses, naming the field, without calling', async () => {
    const fake = server({ content: [], isError: false });
    const run = mcpClient.execute(inputContext(params({ arguments: { city: 3 } }), { mcp: fake.mcp }));
    await expect(run).rejects.toThrow(NodeConfigurationError);
    await expect(mcpClient.execute(inputContext(params({ arguments: {} }), { mcp: fake.mcp }))).rejects.toThrow(
      'Arguments of tool get_weather: city is required',
    );
    await expect(mcpClient.execute(inputContext(params({ arguments: { city: 3 } }), { mcp: fake.mcp }))).rejects.toThrow(
      'Arguments of tool get_weather: city must be string',
    );
    expect(fake.calls).toEqual([]);
  });

  it('fails the node when the tool answers isError, and on an unknown tool', async () => {
    const fake = server({ content: [{ type: 'text', text: 'city not found' }], isError: true });
    await expect(mcpClient.execute(inputContext(params({ arguments: { city: 'Atlantis' } }), { mcp: fake.mcp }))).rejects.toThrow(
      NodeUpstreamError,
    );
    await expect(mcpClient.execute(inputContext(params({ arguments: { city: 'Atlantis' } }), { mcp: fake.mcp }))).rejects.toThrow(
      'Tool get_weather failed: city not found',
    );
    await expect(mcpClient.execute(inputContext(params({ tool: 'nope' }), { mcp: fake.mcp }))).rejects.toThrow('has no tool named nope');
  });

  it('lists the tools of the server in its url parameter for the dropdown', async () => {
    const fake = server({ content: [], isError: false });
    const signal = new AbortController().signal;
    const collections = inputContext({}).collections;
    expect(await mcpToolOptions({ collections, parameters: { url: 'https://mcp.example.com/mcp' }, mcp: fake.mcp, signal })).toEqual([
      { value: 'get_weather', label: 'get_weather', description: 'Weather of a city' },
    ]);
    expect(await mcpToolOptions({ collections, parameters: {}, mcp: fake.mcp, signal })).toEqual([]);
  });

  it.each([
    [{ url: 'https://x.example/mcp', tool: 't' }, []],
    [{ url: 'ftp://x.example/mcp', tool: 't' }, ['url']],
    [{ url: 'https://x.example/mcp', tool: '' }, ['tool']],
    [{ url: 'https://x.example/mcp', tool: 't', credential: 'secret' }, ['credential']],
    [{ url: 'https://x.example/mcp', tool: 't', arguments: [1] }, ['arguments']],
  ])('validates %j', (values, bad) => {
    expect(validateSync(plainToInstance(McpClientParameters, values)).map((e) => e.property)).toEqual(bad);
  });
});
