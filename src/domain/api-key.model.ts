/** An API key as stored: only the SHA-256 of the secret, plus a visible prefix to recognise it. */
export interface ApiKey {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  hash: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}
