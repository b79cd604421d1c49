import { ConfigError, loadConfig } from './app-config';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('AppConfig: BOOTSTRAP_API_KEY', () => {
  it('refuses the placeholder docker-compose.yml once defaulted to, without echoing it', () => {
    const problems = problemsOf({ BOOTSTRAP_API_KEY: 'change-me-to-a-long-random-secret' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^BOOTSTRAP_API_KEY: is a placeholder, not a secret: set a long random secret, e\.g\. .*openssl rand -hex 32/,
    );
    expect(problems[0]).toContain('(got a value of 33 characters)');
    expect(problems[0]).not.toContain('change-me');
  });

  it.each([
    ['another placeholder', 'CHANGEME_CHANGEME_1234567'],
    ['an example value', 'example-bootstrap-key-0001'],
    ['one character repeated', 'aaaaaaaaaaaaaaaaaaaaaaaa'],
    ['few different characters', 'abcabcabcabcabcabcabc'],
  ])('refuses %s', (_, value) => {
    const problems = problemsOf({ BOOTSTRAP_API_KEY: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^BOOTSTRAP_API_KEY: (is a placeholder|has fewer than 8 different characters)/);
    expect(problems[0]).not.toContain(value);
  });

  it('accepts a random secret, and no key at all', () => {
    expect(loadConfig({ BOOTSTRAP_API_KEY: 'b1946ac92492d2347c6235b4d2611184' }).BOOTSTRAP_API_KEY).toBe(
      'b1946ac92492d2347c6235b4d2611184',
    );
    expect(loadConfig({}).BOOTSTRAP_API_KEY).toBeUndefined();
  });

  it('still says a short key is too short, without echoing it', () => {
    expect(problemsOf({ BOOTSTRAP_API_KEY: 'k3y-Zq9!' })).toEqual([
      'BOOTSTRAP_API_KEY: must be at least 16 characters (got a value of 8 characters)',
    ]);
  });
});

describe('AppConfig: metrics and the worker health port', () => {
  it('defaults to metrics on and the worker health port 3001', () => {
    expect(loadConfig({})).toMatchObject({ METRICS_ENABLED: true, WORKER_HEALTH_PORT: 3001 });
  });

  it('reads them, 0 turning the worker health port off', () => {
    expect(loadConfig({ METRICS_ENABLED: 'false', WORKER_HEALTH_PORT: '0' })).toMatchObject({
      METRICS_ENABLED: false,
      WORKER_HEALTH_PORT: 0,
    });
  });

  it('names a bad value', () => {
    expect(problemsOf({ WORKER_HEALTH_PORT: '70000', METRICS_ENABLED: 'maybe' })).toEqual([
      'METRICS_ENABLED: METRICS_ENABLED must be a boolean value (got "maybe")',
      'WORKER_HEALTH_PORT: WORKER_HEALTH_PORT must not be greater than 65535 (got 70000)',
    ]);
  });
});

describe('AppConfig: runs one process works on at once', () => {
  it('is JOB_CONCURRENCY in a process that serves the API, WORKER_JOB_CONCURRENCY in a worker process', () => {
    const env = { JOB_CONCURRENCY: '3', WORKER_JOB_CONCURRENCY: '12' };
    expect(loadConfig({ ...env, APP_ROLE: 'all' }).runConcurrency).toBe(3);
    expect(loadConfig({ ...env, APP_ROLE: 'api' }).runConcurrency).toBe(3);
    expect(loadConfig({ ...env, APP_ROLE: 'worker' }).runConcurrency).toBe(12);
    expect(loadConfig({ APP_ROLE: 'worker' }).runConcurrency).toBe(16);
    expect(loadConfig({}).runConcurrency).toBe(4);
  });

  it('names a bad WORKER_JOB_CONCURRENCY', () => {
    expect(problemsOf({ WORKER_JOB_CONCURRENCY: '0' })).toEqual([expect.stringMatching(/^WORKER_JOB_CONCURRENCY: .*1/)]);
  });
});

describe('AppConfig: connection strings in errors', () => {
  it('masks the credentials of a bad URL instead of echoing them', () => {
    const problems = (() => {
      try {
        loadConfig({
          MONGODB_URI: 'mongdb://admin:S3cretPw@db:27017/x',
          REDIS_URL: 'redis//:hunter2@r:6379',
          ELASTICSEARCH_URL: 'ftp://u:p@es/x',
        });
      } catch (error) {
        return (error as ConfigError).problems.join('\n');
      }
      throw new Error('the configuration was accepted');
    })();
    for (const secret of ['S3cretPw', 'hunter2', 'u:p']) expect(problems).not.toContain(secret);
    expect(problems).toContain('MONGODB_URI');
    expect(problems).toContain('"mongdb://***@db:27017/x"');
    expect(problems).toContain('REDIS_URL');
  });

  it('masks a password with a raw / ? or # in it, which ends the authority early to a URL parser', () => {
    for (const uri of ['mongo://admin:pa/ss@db/x', 'mongo://admin:pa?ss@db/x', 'mongo://admin:pa#ss@db/x']) {
      let problems = '';
      try {
        loadConfig({ MONGODB_URI: uri });
      } catch (error) {
        problems = (error as ConfigError).problems.join('\n');
      }
      expect(problems).toContain('MONGODB_URI');
      expect(problems).not.toMatch(/pa[/?#]ss/);
      expect(problems).toContain('"mongo://***@db/x"');
    }
  });
});
