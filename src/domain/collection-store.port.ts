import { Page, PageRequest } from '../common/page';
import type { Collection, VisibleCollection } from './collection.model';

export abstract class CollectionStore {
  /** Creates the collection and makes its creator the owner, atomically where the store allows. */
  abstract create(collection: Collection): Promise<void>;
  abstract get(id: string): Promise<Collection | null>;
  /** Collections the user holds a role on, newest first. */
  abstract listVisible(userId: string, page: PageRequest): Promise<Page<VisibleCollection>>;
  /** Removes the collection and its memberships. Returns false when it did not exist. */
  abstract delete(id: string): Promise<boolean>;
  /**
   * Records the embedding model on first use; returns what the collection now uses, which differs
   * from the arguments when another model got there first.
   */
  abstract claimEmbedding(id: string, model: string, dimension: number): Promise<{ model: string; dimension: number }>;
}
