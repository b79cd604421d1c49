import { AppError, ErrorCode } from '../common/app-error';

/**
 * What an OAuth access token may do on the MCP server. A client asks for the coarse scopes; on the
 * consent page the user grants some of them and may narrow them to chosen collections and chosen
 * workflows, which the token carries as `collection:<id>` and `workflow:<id>` beside its scopes.
 * The user's own rights still apply underneath: a scope never adds a right.
 */
export const SCOPES = {
  /** List, read and search collections, their files and passages. */
  READ: 'collections:read',
  /** Create collections, add and delete files (reading included). */
  WRITE: 'collections:write',
  /** Call workflows offered as tools, follow their runs and answer their approvals. */
  RUN: 'workflows:run',
} as const;

export const SUPPORTED_SCOPES: readonly string[] = [SCOPES.READ, SCOPES.WRITE, SCOPES.RUN];

/** What the consent page tells the user each scope lets the client do. */
export const SCOPE_DESCRIPTIONS: Record<string, string> = {
  [SCOPES.READ]: 'Read and search your collections',
  [SCOPES.WRITE]: 'Create collections and add or delete their files',
  [SCOPES.RUN]: 'Run your workflows that are offered as tools',
};

const COLLECTION_PREFIX = 'collection:';
const WORKFLOW_PREFIX = 'workflow:';

/** The scopes a token carries for its grant's choices: the granted scopes, then the chosen collections and workflows. */
export function tokenScopes(scope: string, chosen: { collections?: readonly string[]; workflows?: readonly string[] }): string[] {
  return [
    ...scope.split(' ').filter(Boolean),
    ...(chosen.collections ?? []).map((id) => COLLECTION_PREFIX + id),
    ...(chosen.workflows ?? []).map((id) => WORKFLOW_PREFIX + id),
  ];
}

/** The refusal of a call beyond the token's scopes: step-up (RFC 6750 `insufficient_scope`) names the scope to ask for. */
export function insufficientScope(scope: string, why: string): AppError {
  return new AppError(ErrorCode.INSUFFICIENT_SCOPE, `${why}: this connection's authorization lacks the scope ${scope}`, {
    details: { scope },
  });
}

/** The scope an insufficient_scope refusal names, or undefined for any other error. */
export function missingScopeOf(error: unknown): string | undefined {
  if (!(error instanceof AppError) || error.code !== ErrorCode.INSUFFICIENT_SCOPE) return undefined;
  return (error.details as { scope?: string } | undefined)?.scope;
}

/**
 * The checks of one token's scopes, the only place they are judged. Undefined scopes (an API
 * key) allow everything the user may do.
 */
export class ScopeSet {
  private readonly granted: Set<string>;
  /** Undefined: every collection (workflow) the user can reach. */
  readonly collections?: ReadonlySet<string>;
  readonly workflows?: ReadonlySet<string>;

  constructor(scopes: readonly string[]) {
    this.granted = new Set(scopes.filter((s) => !s.startsWith(COLLECTION_PREFIX) && !s.startsWith(WORKFLOW_PREFIX)));
    const chosen = (prefix: string) => {
      const ids = scopes.filter((s) => s.startsWith(prefix)).map((s) => s.slice(prefix.length));
      return ids.length ? new Set(ids) : undefined;
    };
    this.collections = chosen(COLLECTION_PREFIX);
    this.workflows = chosen(WORKFLOW_PREFIX);
  }

  get canRead(): boolean {
    return this.granted.has(SCOPES.READ) || this.granted.has(SCOPES.WRITE);
  }

  get canWrite(): boolean {
    return this.granted.has(SCOPES.WRITE);
  }

  get canRun(): boolean {
    return this.granted.has(SCOPES.RUN);
  }

  /** Reading (or changing) collections at all. @throws AppError INSUFFICIENT_SCOPE */
  requireCollections(write: boolean): void {
    if (!(write ? this.canWrite : this.canRead)) {
      throw insufficientScope(write ? SCOPES.WRITE : SCOPES.READ, write ? 'Changing collections' : 'Reading collections');
    }
  }

  /** @throws AppError INSUFFICIENT_SCOPE */
  requireCollection(collectionId: string, write: boolean): void {
    this.requireCollections(write);
    const scope = write ? SCOPES.WRITE : SCOPES.READ;
    if (this.collections && !this.collections.has(collectionId)) {
      throw insufficientScope(scope, `Collection ${collectionId} was not among the collections chosen when this connection was authorized`);
    }
  }

  /** Creating a collection: write access not narrowed to chosen collections (a new one is among none). */
  requireNewCollection(): void {
    if (!this.canWrite || this.collections) throw insufficientScope(SCOPES.WRITE, 'Creating a collection');
  }

  /** @throws AppError INSUFFICIENT_SCOPE */
  requireWorkflow(workflowId?: string): void {
    if (!this.canRun) throw insufficientScope(SCOPES.RUN, 'Running workflows');
    if (workflowId !== undefined && this.workflows && !this.workflows.has(workflowId)) {
      throw insufficientScope(SCOPES.RUN, `Workflow ${workflowId} was not among the workflows chosen when this connection was authorized`);
    }
  }

  allowsWorkflow(workflowId: string): boolean {
    return this.canRun && (!this.workflows || this.workflows.has(workflowId));
  }
}
