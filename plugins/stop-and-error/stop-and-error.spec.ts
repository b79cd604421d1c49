import { isNodeError } from 'workflow-collection-service/sdk';
import { inputContext } from 'workflow-collection-service/sdk/testing';
import stop, { StopAndErrorParameters } from './index';

describe('stop-and-error node', () => {
  it('throws a stop error with its message and details, never retried', () => {
    let thrown: unknown;
    try {
      stop.execute(
        inputContext(Object.assign(new StopAndErrorParameters(), { message: 'order 7 has no customer', details: { orderId: 7 } })),
      );
    } catch (error) {
      thrown = error;
    }
    expect(
      isNodeError(thrown) && { kind: thrown.kind, retryable: thrown.retryable, message: thrown.message, details: thrown.details },
    ).toEqual({
      kind: 'stopped',
      retryable: false,
      message: 'order 7 has no customer',
      details: { orderId: 7 },
    });
  });
});
