import { DEFAULT_SERVICE_URL, loadStdioConfig, StdioConfigError } from './stdio-config';

describe('loadStdioConfig', () => {
  it('reads the key, accepting a whole "Bearer" header value, and defaults the URL', () => {
    expect(loadStdioConfig({ SERVICE_API_KEY: ' Bearer wcs_abc ' })).toEqual({ apiKey: 'wcs_abc', serviceUrl: DEFAULT_SERVICE_URL });
    expect(loadStdioConfig({ SERVICE_API_KEY: 'wcs_abc', SERVICE_URL: 'https://svc.example/' }).serviceUrl).toBe('https://svc.example/');
  });

  it('refuses a missing key and a URL that is not http(s), saying which variable', () => {
    expect(() => loadStdioConfig({})).toThrow(StdioConfigError);
    expect(() => loadStdioConfig({ SERVICE_API_KEY: 'Bearer ' })).toThrow(/SERVICE_API_KEY/);
    expect(() => loadStdioConfig({ SERVICE_API_KEY: 'k', SERVICE_URL: 'ftp://x' })).toThrow(/SERVICE_URL/);
  });
});
