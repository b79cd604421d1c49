/** A Map kept in use order: a hit moves the key to the end, an overflow drops the first key. */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(
    private readonly capacity: number,
    private readonly onEvict?: (key: K, value: V) => void,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`LRU capacity must be a positive integer, got ${capacity}`);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const [oldestKey, oldestValue] = this.entries.entries().next().value as [K, V];
      this.entries.delete(oldestKey);
      this.onEvict?.(oldestKey, oldestValue);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
