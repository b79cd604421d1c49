import { isUnderDocs } from './api-docs';

describe('isUnderDocs (which answers carry the API explorer security headers)', () => {
  it('names /docs and the paths under it, with or without a query string, and nothing else', () => {
    for (const url of ['/docs', '/docs?x=1', '/docs/', '/docs/json', '/docs/swagger-ui.css?v=2', '/docs/missing']) {
      expect([url, isUnderDocs(url)]).toEqual([url, true]);
    }
    for (const url of ['/', '/doc', '/docsx', '/docs-old/json', '/api/v1/docs', '/api/v1/workflows/wfl_1/runs?wait=10']) {
      expect([url, isUnderDocs(url)]).toEqual([url, false]);
    }
  });
});
