/**
 * Commits other processes make to the store, for a process that none of them tells of their work:
 * processes started by hand without Redis on one SQLite file (`APP_ROLE=api` beside
 * `APP_ROLE=worker`). A caller waiting for a run there wakes when another process committed, then
 * reads its run, instead of at its next look at the store; a worker of the embedded queue with a
 * free slot then looks for the jobs another process queued.
 */
export abstract class StoreCommits {
  /** False where the store cannot tell without a query (MongoDB): `onCommitElsewhere` never calls back. */
  abstract readonly watched: boolean;

  /**
   * Calls `listener` after another process committed to the store, until the answer is called.
   * The store is watched only while someone listens; a commit made after this call returns is
   * told, however soon.
   */
  abstract onCommitElsewhere(listener: () => void): () => void;
}

/** A store that cannot tell (MongoDB): nobody is called. */
export class UnwatchedStoreCommits extends StoreCommits {
  readonly watched = false;

  onCommitElsewhere(): () => void {
    return () => undefined;
  }
}
