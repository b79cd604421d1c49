/**
 * Typed failures a node throws so the executor knows whether trying again can help. Recognised by
 * a brand property rather than `instanceof`, because a plugin loaded from PLUGIN_PATHS may carry
 * its own copy of this file.
 */
export type NodeErrorKind = 'configuration' | 'upstream' | 'timeout' | 'stopped';

export interface NodeErrorOptions {
  /** Machine-readable facts about the failure (never a secret: they are stored in the run record). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

export abstract class NodeError extends Error {
  abstract readonly kind: NodeErrorKind;
  abstract readonly retryable: boolean;
  readonly details?: Record<string, unknown>;
  /** The brand the executor reads; see the file comment. */
  readonly isNodeError = true;

  protected constructor(message: string, options: NodeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.details = options.details;
  }
}

/** The node is set up wrongly (bad parameter, missing variable): the same call fails again, so it is never retried. */
export class NodeConfigurationError extends NodeError {
  override readonly name = 'NodeConfigurationError';
  readonly kind = 'configuration' as const;
  readonly retryable = false;

  constructor(message: string, options: NodeErrorOptions = {}) {
    super(message, options);
  }
}

export interface NodeUpstreamErrorOptions extends NodeErrorOptions {
  /** HTTP status of the upstream answer, when there was one. */
  status?: number;
  /** Overrides the choice made from the status. */
  retryable?: boolean;
}

/** Statuses where the same request may succeed later: timeouts, throttling, server-side failures. */
const RETRYABLE_STATUS = (status: number): boolean => status === 408 || status === 425 || status === 429 || status >= 500;

/** A system the node called failed. Retryable when there was no answer at all or its status says so. */
export class NodeUpstreamError extends NodeError {
  override readonly name = 'NodeUpstreamError';
  readonly kind = 'upstream' as const;
  readonly retryable: boolean;
  readonly status?: number;

  constructor(message: string, options: NodeUpstreamErrorOptions = {}) {
    super(message, options);
    this.status = options.status;
    this.retryable = options.retryable ?? (options.status === undefined || RETRYABLE_STATUS(options.status));
  }
}

/** The node, or a call it made, ran out of time. */
export class NodeTimeoutError extends NodeError {
  override readonly name = 'NodeTimeoutError';
  readonly kind = 'timeout' as const;
  readonly retryable = true;

  constructor(message: string, options: NodeErrorOptions = {}) {
    super(message, options);
  }
}

/**
 * The workflow itself decided to stop with an error (Stop and Error node): the node fails with
 * this message and code, and is never retried.
 */
export class NodeStopError extends NodeError {
  override readonly name = 'NodeStopError';
  readonly kind = 'stopped' as const;
  readonly retryable = false;

  constructor(message: string, options: NodeErrorOptions = {}) {
    super(message, options);
  }
}

export function isNodeError(value: unknown): value is NodeError {
  return (
    value instanceof Error && (value as Partial<NodeError>).isNodeError === true && typeof (value as Partial<NodeError>).kind === 'string'
  );
}
