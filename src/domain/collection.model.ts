import type { Role } from './membership.model';

export interface Collection {
  id: string;
  name: string;
  ownerId: string;
  createdAt: Date;
  updatedAt: Date;
  /** The embedding model and dimension of the collection's vectors, fixed by the first indexed file. */
  embeddingModel: string | null;
  embeddingDimension: number | null;
}

export type VisibleCollection = Collection & { role: Role };
