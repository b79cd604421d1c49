/**
 * What the processes sharing one store record in it, so that a process pointed at another store
 * or another queue refuses to boot instead of taking jobs for runs it cannot find: the store's own
 * id (`store`, written at first boot) and the queue its runs are queued on (`queue`, held under a
 * lease its processes renew while they live, so a deliberate change of queue is possible once every
 * process of the former one has stopped).
 */
export abstract class ServiceIdentityStore {
  /** The value of `key`, after writing `value` there if it had none. */
  abstract claim(key: string, value: string): Promise<string>;
  /**
   * Holds `key` for `value` until `leaseMs` from now, unless another value holds it under a lease
   * that has not run out; answers the value that holds it (`value` when this call does).
   */
  abstract hold(key: string, value: string, leaseMs: number): Promise<string>;
}
