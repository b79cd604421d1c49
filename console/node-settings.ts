import type { Backoff, NodeSpec, OnError } from './api-types';

export interface FailureSettings {
  onError: OnError;
  retryOnFail: boolean;
  maxTries?: number;
  waitBetweenTries?: number;
  backoff?: Backoff;
}

/** What a node's failure does, in the newer spelling; the older `continueOnError` and `retry` are read and replaced on a change. */
export function failureSettings(node: NodeSpec): FailureSettings {
  const onError = node.onError ?? (node.continueOnError === true ? 'continue' : 'stop');
  if (node.retry && node.retryOnFail === undefined && node.maxTries === undefined) {
    return {
      onError,
      retryOnFail: node.retry.maxAttempts > 1,
      maxTries: node.retry.maxAttempts,
      waitBetweenTries: node.retry.backoffMs,
      backoff: 'exponential',
    };
  }
  return {
    onError,
    retryOnFail: node.retryOnFail === true,
    maxTries: node.maxTries,
    waitBetweenTries: node.waitBetweenTries,
    backoff: node.backoff,
  };
}

/** The node with its failure settings replaced: defaults are left out, as is the older spelling. */
export function withFailureSettings(node: NodeSpec, settings: FailureSettings): NodeSpec {
  const next: NodeSpec = { ...node };
  for (const key of ['onError', 'continueOnError', 'retry', 'retryOnFail', 'maxTries', 'waitBetweenTries', 'backoff'] as const)
    delete next[key];
  if (settings.onError !== 'stop') next.onError = settings.onError;
  if (settings.retryOnFail) {
    next.retryOnFail = true;
    if (settings.maxTries !== undefined) next.maxTries = settings.maxTries;
    if (settings.waitBetweenTries !== undefined) next.waitBetweenTries = settings.waitBetweenTries;
    if (settings.backoff !== undefined && settings.backoff !== 'fixed') next.backoff = settings.backoff;
  }
  return next;
}
