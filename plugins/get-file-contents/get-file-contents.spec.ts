import { CollectionFileContent, CollectionsFacade, NodeConfigurationError } from 'workflow-collection-service/sdk';
import { inputContext, itemContext } from 'workflow-collection-service/sdk/testing';
import getFileContents, { fileRefsIn, GetFileContentsParameters } from './index';

const stored: Record<string, { status: string; text?: string }> = {
  fle_a: { status: 'indexed', text: 'alpha text' },
  fle_b: { status: 'indexed', text: 'beta text' },
  fle_c: { status: 'indexed', text: 'gamma text' },
  fle_pending: { status: 'pending' },
};

describe('get-file-contents node', () => {
  const reads: string[] = [];
  const logged: unknown[] = [];
  const collections: Pick<CollectionsFacade, 'listFiles' | 'getFileContent'> = {
    listFiles: () => Promise.reject(new Error('not used')),
    async getFileContent(collectionId, fileId): Promise<CollectionFileContent> {
      reads.push(`${collectionId}/${fileId}`);
      // Later files answer first: the output must still follow the input's order.
      await new Promise((resolve) => setTimeout(resolve, 10 - Object.keys(stored).indexOf(fileId)));
      const file = stored[fileId];
      if (!file) throw new NodeConfigurationError(`file ${fileId} not found`, { details: { code: 'NOT_FOUND' } });
      if (file.status !== 'indexed')
        throw new NodeConfigurationError(`file ${fileId} has no extracted text: its status is ${file.status}`, {
          details: { code: 'CONFLICT', status: file.status },
        });
      return { id: fileId, name: `${fileId}.txt`, type: 'text/plain', content: file.text! };
    },
  };

  beforeEach(() => {
    reads.length = 0;
    logged.length = 0;
  });

  function execute(input: unknown, params: Partial<GetFileContentsParameters> = {}, runMode: 'input' | 'item' = 'input') {
    const parameters = Object.assign(new GetFileContentsParameters(), { collectionId: 'col_1', ...params });
    const services = {
      collections: collections as CollectionsFacade,
      logger: { debug() {}, info: (...args: unknown[]) => logged.push(args), warn() {}, error() {} },
    };
    const ctx =
      runMode === 'input' ? inputContext(parameters, { ...services, input }) : itemContext(parameters, { ...services, item: input });
    return getFileContents.execute(ctx) as Promise<CollectionFileContent[]>;
  }

  const listed = (id: string, collectionId = 'col_1') => ({
    id,
    collectionId,
    name: `${id}.txt`,
    type: 'text/plain',
    size: 10,
    status: 'indexed',
    createdAt: '2026-01-01T00:00:00.000Z',
  });

  it("reads List Files' output in item mode (one array per page) in order, as one array", async () => {
    const output = await execute([[listed('fle_a'), listed('fle_b')], [listed('fle_c')], []]);
    expect(output).toEqual([
      { id: 'fle_a', name: 'fle_a.txt', type: 'text/plain', content: 'alpha text' },
      { id: 'fle_b', name: 'fle_b.txt', type: 'text/plain', content: 'beta text' },
      { id: 'fle_c', name: 'fle_c.txt', type: 'text/plain', content: 'gamma text' },
    ]);
    expect(reads.sort()).toEqual(['col_1/fle_a', 'col_1/fle_b', 'col_1/fle_c']);
  });

  it('reads each file from the collection its object names when collectionId is left out', async () => {
    const output = await execute([[listed('fle_a', 'col_1'), listed('fle_b', 'col_2')]], { collectionId: undefined });
    expect(output.map((f) => f.id)).toEqual(['fle_a', 'fle_b']);
    expect(reads.sort()).toEqual(['col_1/fle_a', 'col_2/fle_b']);
    // A bare id names no collection: the node says what to set.
    await expect(execute(['fle_a'], { collectionId: undefined })).rejects.toThrow(
      'input[0] names no collection: set the collectionId parameter',
    );
  });

  it('takes ids, one id, or the files parameter instead of the input', async () => {
    expect((await execute(['fle_c', 'fle_a'])).map((f) => f.content)).toEqual(['gamma text', 'alpha text']);
    expect((await execute('fle_b')).map((f) => f.id)).toEqual(['fle_b']);
    expect((await execute({ unrelated: true }, { files: ['fle_a'] })).map((f) => f.id)).toEqual(['fle_a']);
    expect((await execute([listed('fle_b')], {}, 'item')).map((f) => f.id)).toEqual(['fle_b']);
    expect(await execute(null)).toEqual([]);
  });

  it('passes over the error records Continue on Error leaves upstream', async () => {
    const output = await execute([[listed('fle_a')], { error: { code: 'NODE_CONFIGURATION', message: 'collection col_x not found' } }]);
    expect(output.map((f) => f.id)).toEqual(['fle_a']);
  });

  it('refuses what is not a file, saying where it is', async () => {
    await expect(execute([['fle_a', { name: 'no id' }]])).rejects.toThrow(
      'input[0][1] is not a file: expected a file id or an object with an "id", got {"name":"no id"}',
    );
    expect(() => fileRefsIn([42], 'col_1')).toThrow(NodeConfigurationError);
  });

  it('fails on a file without text, or leaves it out when told to', async () => {
    await expect(execute(['fle_a', 'fle_pending'])).rejects.toThrow('its status is pending');
    const output = await execute(['fle_a', 'fle_pending', 'fle_b'], { skipFilesWithoutText: true });
    expect(output.map((f) => f.id)).toEqual(['fle_a', 'fle_b']);
    expect(logged).toHaveLength(1);
  });

  it('still fails on a file that is not there when skipping files without text', async () => {
    await expect(execute(['fle_a', 'fle_gone'], { skipFilesWithoutText: true })).rejects.toThrow('file fle_gone not found');
  });

  it('with skipUnavailable leaves out files without text and files that are gone, logging each', async () => {
    const output = await execute(['fle_a', 'fle_pending', 'fle_gone', 'fle_c'], { skipUnavailable: true });
    expect(output.map((f) => f.id)).toEqual(['fle_a', 'fle_c']);
    expect(logged.map((entry) => (entry as [string])[0])).toEqual(['file left out: it has no extracted text', 'file left out: it is gone']);
  });

  it('runs once on its whole input by default', () => {
    expect(getFileContents.defaultRunMode).toBe('input');
  });
});
