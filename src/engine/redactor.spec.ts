import { Redactor, REDACTED } from './redactor';

describe('Redactor', () => {
  const secret = 'p@ss "word"/ä';
  const redactor = new Redactor([secret, 'sk-123456', 'ab']);

  it('masks raw, JSON-escaped and URL-encoded spellings, in keys and nested values', () => {
    const value = {
      raw: `token=${secret}`,
      escaped: JSON.stringify({ password: secret }),
      encoded: `https://x/?k=${encodeURIComponent(secret)}`,
      [`key-sk-123456`]: ['sk-123456', 1, true, null, { deep: 'xsk-123456x' }],
    };
    const masked = redactor.value(value);
    const text = JSON.stringify(masked);
    expect(text).not.toContain('sk-123456');
    expect(text).not.toContain('p@ss');
    expect(masked).toEqual({
      raw: `token=${REDACTED}`,
      escaped: `{"password":"${REDACTED}"}`,
      encoded: `https://x/?k=${REDACTED}`,
      [`key-${REDACTED}`]: [REDACTED, 1, true, null, { deep: `x${REDACTED}x` }],
    });
    expect(value.raw).toBe(`token=${secret}`);
  });

  it('leaves values shorter than three characters alone: they would mask ordinary text', () => {
    expect(redactor.string('abc')).toBe('abc');
  });

  it('adds the secrets of another redactor, keeping its own', () => {
    const inherited = Redactor.NONE.with(['parent-secret']).with(redactor.secrets);
    expect(inherited.string(`parent-secret sk-123456 ${secret}`)).toBe(`${REDACTED} ${REDACTED} ${REDACTED}`);
    expect(inherited.secrets).toEqual(['parent-secret', secret, 'sk-123456']);
    expect(redactor.with([])).toBe(redactor);
  });

  it('is a no-op without secrets', () => {
    const value = { a: 1 };
    expect(Redactor.NONE.value(value)).toBe(value);
    expect(Redactor.NONE.active).toBe(false);
  });
});
