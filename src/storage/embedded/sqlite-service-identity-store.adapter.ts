import { ServiceIdentityStore } from '../../domain/service-identity.port';
import type { SqliteDb } from './sqlite-database';

export class SqliteServiceIdentityStore extends ServiceIdentityStore {
  private readonly insert;
  private readonly read;
  private readonly claimAtomically;
  private readonly replaceAtomically;

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
    this.replaceAtomically = db.transaction((key: string, value: string): string | null => {
      const found = (this.read.get(key) as string | undefined) ?? null;
      this.insert.run(key, value);
      return found;
    });
  }

  async claim(key: string, value: string): Promise<string> {
    return this.claimAtomically.immediate(key, value);
  }

  async replace(key: string, value: string): Promise<string | null> {
    return this.replaceAtomically.immediate(key, value);
  }
}
