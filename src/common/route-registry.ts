/**
 * Remembers every registered route so that a request for a known path with another method can
 * answer 405 with `Allow`, instead of a misleading 404.
 */
export class RouteRegistry {
  private readonly routes: { method: string; pattern: RegExp }[] = [];

  add(method: string | string[], url: string): void {
    const pattern = new RegExp(
      '^' +
        url
          .split('/')
          .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : escape(segment)))
          .join('/') +
        '/?$',
    );
    for (const m of Array.isArray(method) ? method : [method]) {
      if (m !== 'HEAD' && m !== 'OPTIONS') this.routes.push({ method: m, pattern });
    }
  }

  allowedMethods(path: string): string[] {
    const clean = path.split('?')[0];
    return [...new Set(this.routes.filter((r) => r.pattern.test(clean)).map((r) => r.method))].sort();
  }
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
