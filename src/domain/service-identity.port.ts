/**
 * What the processes sharing one store record in it, so that a process pointed at another store
 * or another queue refuses to boot instead of taking jobs for runs it cannot find: the store's own
 * id (`store`, written at first boot) and the queue its runs are queued on (`queue`).
 */
export abstract class ServiceIdentityStore {
  /** The value of `key`, after writing `value` there if it had none. */
  abstract claim(key: string, value: string): Promise<string>;
  /** Writes `value` under `key`, replacing what was there; answers what was there before, if anything. */
  abstract replace(key: string, value: string): Promise<string | null>;
}
