import { ServiceIdentityStore } from '../../domain/service-identity.port';
import type { SqliteDb } from './sqlite-database';

export class SqliteServiceIdentityStore extends ServiceIdentityStore {
  private readonly insert;
  private readonly read;
  private readonly claimAtomically;
  private readonly holdAtomically;

  constructor(db: SqliteDb) {
    super();
    this.insert = db.prepare(
      'INSERT INTO service_identity (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
    this.read = db.prepare('SELECT value FROM service_identity WHERE key = ?').pluck();
    // Immediate: processes booting together agree on the first value written.
    this.claimAtomically = db.transaction((key: string, value: string): string => {
      const found = this.read.get(key) as string | undefined;
      if (found !== undefined) return found;
      this.insert.run(key, value);
      return value;
    });
    // The lease's end is a key of its own (`queue@until`), so the table keeps its two columns.
    this.holdAtomically = db.transaction((key: string, value: string, leaseMs: number): string => {
      const found = this.read.get(key) as string | undefined;
      const until = Number(this.read.get(`${key}@until`) ?? 0);
      const now = Date.now();
      if (found !== undefined && found !== value && until > now) return found;
      this.insert.run(key, value);
      this.insert.run(`${key}@until`, String(now + leaseMs));
      return value;
    });
  }

  async claim(key: string, value: string): Promise<string> {
    return this.claimAtomically.immediate(key, value);
  }

  async hold(key: string, value: string, leaseMs: number): Promise<string> {
    return this.holdAtomically.immediate(key, value, leaseMs);
  }
}
