/**
 * The API key lives in sessionStorage: it survives a reload of the tab and is gone when the tab
 * closes, and other tabs do not share it.
 */
const KEY = 'console.apiKey';

export const session = {
  key(): string | null {
    return sessionStorage.getItem(KEY);
  },
  signIn(key: string): void {
    sessionStorage.setItem(KEY, key);
  },
  signOut(): void {
    sessionStorage.removeItem(KEY);
  },
};
