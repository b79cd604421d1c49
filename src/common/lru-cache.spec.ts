import { LruCache } from './lru-cache';

describe('LruCache', () => {
  it('evicts the least recently used entry and reports it', () => {
    const evicted: Array<[string, number]> = [];
    const cache = new LruCache<string, number>(2, (key, value) => evicted.push([key, value]));
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3);
    expect(evicted).toEqual([['b', 2]]);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.size).toBe(2);
  });

  it('replaces a value without evicting anything', () => {
    const onEvict = jest.fn();
    const cache = new LruCache<string, number>(2, onEvict);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 10);
    expect(onEvict).not.toHaveBeenCalled();
    cache.set('c', 3);
    expect(onEvict).toHaveBeenCalledWith('b', 2);
    expect(cache.get('a')).toBe(10);
  });

  it('refuses a capacity below one', () => {
    expect(() => new LruCache(0)).toThrow(RangeError);
  });
});
