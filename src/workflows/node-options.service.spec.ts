import pino from 'pino';
import { ErrorCode } from '../common/app-error';
import { NodeRegistry } from '../engine/node-registry';
import { registerDefinition } from '../engine/plugin-loader';
import { defineNode, LoadOptionsContext, NodeTimeoutError, Parameter } from '../sdk';
import { NodeOptionsService } from './node-options.service';

const principal = { userId: 'usr_1', keyId: 'key_1', isAdmin: false };

describe('NodeOptionsService', () => {
  it('aborts the signal of a loadOptions that does not answer in time, and answers TIMEOUT', async () => {
    let seen: AbortSignal | undefined;
    class Params {
      @Parameter({
        description: 'never answers',
        loadOptions: (ctx: LoadOptionsContext) => {
          seen = ctx.signal;
          return new Promise(() => {});
        },
      })
      slow: string;

      @Parameter({
        description: 'its own timeout',
        loadOptions: () => {
          throw new NodeTimeoutError('the catalogue did not answer');
        },
      })
      late: string;
    }
    const node = defineNode({
      type: 'slow',
      version: 1,
      displayName: 'Slow',
      description: 'x',
      parameters: Params,
      defaultRunMode: 'input',
      execute: () => null,
    });
    const service = new NodeOptionsService(new NodeRegistry([registerDefinition(node, 'slow')]), pino({ level: 'silent' }), undefined, 20);

    await expect(service.options(principal, 'slow', '1', 'slow')).rejects.toMatchObject({ code: ErrorCode.TIMEOUT, httpStatus: 504 });
    expect(seen?.aborted).toBe(true);
    await expect(service.options(principal, 'slow', '1', 'late')).rejects.toMatchObject({
      code: ErrorCode.TIMEOUT,
      message: 'the catalogue did not answer',
    });
  });
});
