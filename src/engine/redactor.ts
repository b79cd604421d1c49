export const REDACTED = '[REDACTED]';

/** Shorter values match too much ordinary text to be masked usefully (and are no secret anyway). */
const MIN_SECRET_LENGTH = 3;

/**
 * Masks secret values wherever they appear: in strings, object keys and nested values. A secret
 * echoed back by a server can come back escaped, so the JSON-escaped and URL-encoded spellings of
 * each secret are masked as well as the raw one.
 */
export class Redactor {
  static readonly NONE = new Redactor([]);

  private readonly pattern: RegExp | null;
  /** The values it masks, as given: what `with` adds to and a sub-workflow run inherits. */
  readonly secrets: readonly string[];

  constructor(secrets: readonly string[]) {
    this.secrets = secrets.filter((secret) => typeof secret === 'string' && secret.length >= MIN_SECRET_LENGTH);
    const forms = new Set<string>();
    for (const secret of this.secrets) {
      forms.add(secret);
      forms.add(JSON.stringify(secret).slice(1, -1));
      forms.add(encodeURIComponent(secret));
    }
    // Longest first, so a secret that contains another is masked whole.
    const alternatives = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.pattern = alternatives.length ? new RegExp(alternatives.join('|'), 'g') : null;
  }

  /** Masks these secrets too; itself when there is nothing to add. */
  with(secrets: readonly string[]): Redactor {
    const added = secrets.filter((secret) => !this.secrets.includes(secret));
    return added.length ? new Redactor([...this.secrets, ...added]) : this;
  }

  get active(): boolean {
    return this.pattern !== null;
  }

  string(text: string): string {
    return this.pattern ? text.replace(this.pattern, REDACTED) : text;
  }

  /** A copy of a JSON-like value with every secret masked; the value itself when there are no secrets. */
  value<T>(value: T): T {
    return this.pattern ? (this.walk(value, 0) as T) : value;
  }

  private walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.string(value);
    if (value === null || typeof value !== 'object' || depth > 200) return value;
    if (Buffer.isBuffer(value)) return this.string(value.toString('utf8'));
    if (Array.isArray(value)) return value.map((v) => this.walk(v, depth + 1));
    if (value instanceof Date) return value;
    const copy: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) copy[this.string(key)] = this.walk(v, depth + 1);
    return copy;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
