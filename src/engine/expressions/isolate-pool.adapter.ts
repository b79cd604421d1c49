import ivm from 'isolated-vm';
import { LruCache } from '../../common/lru-cache';
import { MAX_REASON_LENGTH, Outcome, SANDBOX_SOURCE } from './sandbox-source';

/**
 * What an isolate compiles: one expression, or the insertions of a template and the literal text
 * around them. The engine keeps one instance per source and parameter list, so an isolate's
 * cache can be keyed by identity.
 */
export interface Program {
  /** JSON array of the parameter names, in the order of the arguments array. */
  readonly paramsJson: string;
  /** JSON array of the code of each expression. */
  readonly codesJson: string;
  /** JSON array of a template's literal text; '' for an expression. */
  readonly literalsJson: string;
}

export interface IsolatePoolOptions {
  poolSize: number;
  memoryLimitMb: number;
  timeoutMs: number;
  /** Compiled programs kept per isolate. */
  cacheSize: number;
}

/**
 * `failed`: the evaluation's own fault (syntax, exception, result, timeout, memory), `reason` says
 * which. `aborted`: the caller's signal fired. `closed`: the pool was closed.
 */
export type SandboxFailure = 'failed' | 'aborted' | 'closed';

export class SandboxError extends Error {
  override readonly name = 'SandboxError';

  constructor(
    readonly failure: SandboxFailure,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/**
 * Added to the isolate's own timeout before the host disposes the isolate and fails the call: a
 * builtin that ignores the timeout (flattening a huge string, a backtracking regular expression)
 * can run on for seconds.
 */
const WATCHDOG_GRACE_MS = 250;

/**
 * Longest a synchronous call may hold the event loop, except inside a builtin that ignores
 * timeouts; see IsolatePool.
 */
const SYNC_BUDGET_MS = 5;
const SYNC_BUDGET_NS = BigInt(SYNC_BUDGET_MS * 1_000_000);

/** isolated-vm's message when `timeout` ends a call. */
const TIMED_OUT_MESSAGE = 'Script execution timed out.';

interface Sandbox {
  readonly isolate: ivm.Isolate;
  /** Held so the context lives exactly as long as the sandbox, whatever isolated-vm does with handles. */
  readonly context: ivm.Context;
  /** `(paramsJson, codesJson, literalsJson) => id | syntax error`, see sandbox-source.ts. */
  readonly compile: ivm.Reference;
  /** `(id, argsJson) => outcome`, see sandbox-source.ts. */
  readonly run: ivm.Reference;
  /** Program ids in this isolate, by the host's Program. */
  readonly programs: LruCache<Program, number>;
}

/**
 * One isolate, running one evaluation at a time. Created on first use and again after its isolate
 * was disposed (memory limit, abort, watchdog), so a lost isolate costs the evaluation that lost
 * it and nothing else.
 */
interface Slot {
  sandbox: Sandbox | undefined;
  busy: boolean;
}

interface Waiting {
  readonly program: Program;
  readonly argsJson: string;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (output: string) => void;
  readonly reject: (error: unknown) => void;
  onAbort?: () => void;
}

/**
 * A fixed number of isolates, each with one context whose intrinsics are frozen. Evaluations
 * beyond the pool size wait in FIFO order on the host rather than in an isolate's own queue, so
 * that when an isolate dies the host knows which single evaluation was inside it.
 *
 * A program runs with the asynchronous `apply` until a run has shown it cheap (at most
 * SYNC_BUDGET_MS of CPU time); from then on it runs with `applySync` under a timeout of
 * SYNC_BUDGET_MS. Measured, `applySync` costs about a quarter of `apply` and keeps its p99 flat on
 * a busy machine, as no thread hand-off is involved, but it holds the event loop. A synchronous
 * call over the budget runs again with `apply` under the full timeout, and a program that is
 * costly there (CPU time over the budget, a timeout, the memory limit) stays with `apply` for
 * good. `apply` runs on isolated-vm's thread, holds one isolate but not the event loop, and can be
 * aborted. Running a call again is safe because it has no effect outside the isolate: arguments
 * are JSON copies, intrinsics are frozen, and nothing of the host is reachable.
 */
export class IsolatePool {
  private readonly slots: Slot[];
  private readonly waiting: Waiting[] = [];
  /** How each program is run; a program not in the map runs asynchronously. */
  private readonly callMode = new WeakMap<Program, 'sync' | 'async'>();
  private closed = false;

  constructor(private readonly options: IsolatePoolOptions) {
    this.slots = Array.from({ length: options.poolSize }, () => ({ sandbox: undefined, busy: false }));
  }

  /**
   * Runs `program` with the JSON array `argsJson` as its arguments and returns its output: the
   * result's JSON for an expression, the rendered text for a template.
   *
   * @throws SandboxError
   */
  run(program: Program, argsJson: string, signal?: AbortSignal): Promise<string> {
    if (this.closed) return Promise.reject(closedError());
    if (signal?.aborted) return Promise.reject(abortedError());
    const idle = this.slots.find(isIdle);
    if (idle !== undefined) return this.execute(idle, program, argsJson, signal);
    return new Promise<string>((resolve, reject) => {
      const waiting: Waiting = { program, argsJson, signal, resolve, reject };
      if (signal !== undefined) {
        waiting.onAbort = () => {
          this.waiting.splice(this.waiting.indexOf(waiting), 1);
          reject(abortedError());
        };
        signal.addEventListener('abort', waiting.onAbort, { once: true });
      }
      this.waiting.push(waiting);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiting of this.waiting.splice(0)) {
      stopListening(waiting);
      waiting.reject(closedError());
    }
    for (const slot of this.slots) {
      if (slot.sandbox !== undefined) this.retire(slot, slot.sandbox);
    }
  }

  private async execute(slot: Slot, program: Program, argsJson: string, signal: AbortSignal | undefined): Promise<string> {
    slot.busy = true;
    try {
      slot.sandbox ??= await this.createSandbox();
      const sandbox = slot.sandbox;
      let id = sandbox.programs.get(program);
      if (id === undefined) {
        id = this.compile(slot, sandbox, program);
        sandbox.programs.set(program, id);
      }
      return decode((await this.call(slot, sandbox, program, [id, argsJson], signal)) as string);
    } finally {
      slot.busy = false;
      this.startNextWaiting(slot);
    }
  }

  private startNextWaiting(slot: Slot): void {
    const next = this.waiting.shift();
    if (next === undefined) return;
    stopListening(next);
    this.execute(slot, next.program, next.argsJson, next.signal).then(next.resolve, next.reject);
  }

  /**
   * Synchronous: compiling runs no user code, and parsing takes time in proportion to the source,
   * which the caller bounds.
   */
  private compile(slot: Slot, sandbox: Sandbox, program: Program): number {
    let compiled: number | string;
    try {
      const args = [program.paramsJson, program.codesJson, program.literalsJson];
      compiled = sandbox.compile.applySync(undefined, args, { timeout: this.options.timeoutMs }) as number | string;
    } catch (error) {
      throw this.explain(error, slot, sandbox);
    }
    if (typeof compiled === 'string') throw new SandboxError('failed', compiled);
    return compiled;
  }

  private async call(slot: Slot, sandbox: Sandbox, program: Program, args: unknown[], signal: AbortSignal | undefined): Promise<unknown> {
    const mode = this.callMode.get(program);
    if (mode === 'sync') {
      const budget = Math.min(SYNC_BUDGET_MS, this.options.timeoutMs);
      try {
        return sandbox.run.applySync(undefined, args, { timeout: budget });
      } catch (error) {
        if (!isTimeout(error) || budget === this.options.timeoutMs) {
          if (sandbox.isolate.isDisposed) this.callMode.set(program, 'async');
          throw this.explain(error, slot, sandbox);
        }
        // Over the budget in wall time, which a busy machine can cause on its own: the
        // asynchronous run below measures CPU time and decides.
      }
    }
    if (mode === 'async') return this.callAsync(slot, sandbox, args, signal);
    const cpuBefore = sandbox.isolate.cpuTime;
    let result: unknown;
    try {
      result = await this.callAsync(slot, sandbox, args, signal);
    } catch (error) {
      if (error instanceof SandboxError && error.failure === 'failed') this.callMode.set(program, 'async');
      throw error;
    }
    const cheap = !sandbox.isolate.isDisposed && sandbox.isolate.cpuTime - cpuBefore <= SYNC_BUDGET_NS;
    this.callMode.set(program, cheap ? 'sync' : 'async');
    return result;
  }

  /**
   * Settles when the call does, or as soon as the watchdog or the signal fires: a call stuck in a
   * builtin that ignores the timeout (flattening a huge string) keeps its thread busy for seconds
   * after its isolate was disposed, and the caller need not wait for that.
   */
  private callAsync(slot: Slot, sandbox: Sandbox, args: unknown[], signal: AbortSignal | undefined): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(watchdog);
        signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      const interrupt = (error: SandboxError) => {
        this.retire(slot, sandbox);
        settle(() => reject(error));
      };
      const onAbort = () => interrupt(abortedError());
      const watchdog = setTimeout(() => interrupt(this.timedOut()), this.options.timeoutMs + WATCHDOG_GRACE_MS);
      signal?.addEventListener('abort', onAbort, { once: true });
      sandbox.run.apply(undefined, args, { timeout: this.options.timeoutMs }).then(
        (value: unknown) => settle(() => resolve(value)),
        (error: unknown) => settle(() => reject(this.explain(error, slot, sandbox))),
      );
    });
  }

  private explain(error: unknown, slot: Slot, sandbox: Sandbox): SandboxError {
    if (this.closed) return closedError();
    if (isTimeout(error)) return this.timedOut();
    if (sandbox.isolate.isDisposed) {
      // Only isolated-vm's memory limit disposes an isolate without settling the call first.
      this.retire(slot, sandbox);
      return new SandboxError('failed', 'memory limit exceeded');
    }
    // `run` and `compile` never throw, so what is left is a promise the code rejected and left
    // unhandled, which isolated-vm reports as the call's error.
    return new SandboxError('failed', clip(`Uncaught (in promise) ${describe(error)}`));
  }

  private timedOut(): SandboxError {
    return new SandboxError('failed', `timed out after ${this.options.timeoutMs} ms`);
  }

  /** Disposes the slot's isolate; the slot builds a new one when next used. */
  private retire(slot: Slot, sandbox: Sandbox): void {
    if (slot.sandbox === sandbox) slot.sandbox = undefined;
    if (!sandbox.isolate.isDisposed) sandbox.isolate.dispose();
  }

  private async createSandbox(): Promise<Sandbox> {
    const isolate = new ivm.Isolate({ memoryLimit: this.options.memoryLimitMb });
    try {
      const context = await isolate.createContext();
      const api = await context.eval(SANDBOX_SOURCE, { reference: true });
      const forget: ivm.Reference = api.getSync('forget', { reference: true });
      const sandbox: Sandbox = {
        isolate,
        context,
        compile: api.getSync('compile', { reference: true }),
        run: api.getSync('run', { reference: true }),
        programs: new LruCache<Program, number>(this.options.cacheSize, (_program, id) => {
          if (!isolate.isDisposed) forget.applyIgnored(undefined, [id]);
        }),
      };
      api.release();
      if (this.closed) throw closedError();
      return sandbox;
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  }
}

function isTimeout(error: unknown): boolean {
  return isErrorLike(error) && error.message === TIMED_OUT_MESSAGE;
}

/**
 * isolated-vm builds its errors in the main realm, so `instanceof Error` fails wherever the host
 * code runs in another realm (jest's test sandbox).
 */
function isErrorLike(error: unknown): error is { name: unknown; message: unknown } {
  return typeof error === 'object' && error !== null && 'message' in error;
}

function stopListening(waiting: Waiting): void {
  if (waiting.onAbort !== undefined) waiting.signal?.removeEventListener('abort', waiting.onAbort);
}

function isIdle(slot: Slot): boolean {
  return !slot.busy;
}

function decode(output: string): string {
  switch (output[0]) {
    case Outcome.VALUE:
      return output.slice(1);
    case Outcome.THREW:
    case Outcome.NOT_JSON:
      throw new SandboxError('failed', output.slice(1));
    default:
      throw new SandboxError('failed', 'sandbox returned an unknown outcome');
  }
}

function describe(error: unknown): string {
  return isErrorLike(error) ? `${String(error.name)}: ${String(error.message)}` : String(error);
}

function clip(text: string): string {
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH)}…` : text;
}

function closedError(): SandboxError {
  return new SandboxError('closed', 'expression engine is closed');
}

function abortedError(): SandboxError {
  return new SandboxError('aborted', 'evaluation aborted');
}
