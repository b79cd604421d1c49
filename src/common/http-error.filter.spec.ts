import { AppError, ErrorCode } from './app-error';
import { errorResponse } from './http-error.filter';

describe('errorResponse', () => {
  it('gives each error the headers it calls for', () => {
    expect(
      errorResponse(new AppError(ErrorCode.METHOD_NOT_ALLOWED, 'no', { details: { allow: ['GET', 'HEAD'] } }), 'req_1').headers,
    ).toEqual({ allow: 'GET, HEAD' });
    expect(
      errorResponse(new AppError(ErrorCode.RATE_LIMITED, 'slow down', { details: { retryAfterSeconds: 7 } }), 'req_1').headers,
    ).toEqual({ 'retry-after': '7' });
    expect(errorResponse(new AppError(ErrorCode.UNAUTHENTICATED, 'who?'), 'req_1').headers).toEqual({
      'www-authenticate': 'Bearer realm="service"',
    });
    expect(errorResponse(AppError.notFound('collection', 'col_1'), 'req_1')).toEqual({
      status: 404,
      headers: {},
      body: { code: 'NOT_FOUND', message: 'collection col_1 not found', requestId: 'req_1' },
    });
  });

  it('hides the message of an internal error, not that of an unavailable dependency', () => {
    expect(errorResponse(new AppError(ErrorCode.INTERNAL, 'SQLITE_CORRUPT at /data/app.db'), 'req_2')).toEqual({
      status: 500,
      headers: {},
      body: { code: 'INTERNAL', message: 'Internal server error', requestId: 'req_2' },
    });
    expect(
      errorResponse(new AppError(ErrorCode.UNAVAILABLE, 'the queue is not reachable', { retryable: true }), 'req_3').body.message,
    ).toBe('the queue is not reachable');
  });
});
