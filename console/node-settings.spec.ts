import { failureSettings, withFailureSettings } from './node-settings';

describe('node settings (retries and onError)', () => {
  it('reads the older spellings as the newer ones', () => {
    expect(failureSettings({ id: 'a', type: 'set', continueOnError: true })).toEqual({ onError: 'continue', retryOnFail: false });
    expect(failureSettings({ id: 'a', type: 'set', retry: { maxAttempts: 3, backoffMs: 200 } })).toEqual({
      onError: 'stop',
      retryOnFail: true,
      maxTries: 3,
      waitBetweenTries: 200,
      backoff: 'exponential',
    });
  });

  it('writes only the newer spelling, and leaves defaults and unused retry fields out', () => {
    const older = { id: 'a', type: 'set', continueOnError: true, retry: { maxAttempts: 2 } };
    expect(withFailureSettings(older, { onError: 'errorOutput', retryOnFail: true, maxTries: 4, backoff: 'exponential' })).toEqual({
      id: 'a',
      type: 'set',
      onError: 'errorOutput',
      retryOnFail: true,
      maxTries: 4,
      backoff: 'exponential',
    });
    expect(withFailureSettings(older, { onError: 'stop', retryOnFail: false, maxTries: 4, backoff: 'fixed' })).toEqual({
      id: 'a',
      type: 'set',
    });
  });
});
