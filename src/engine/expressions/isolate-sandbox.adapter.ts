import ivm from 'isolated-vm';
import { LruCache } from '../../common/lru-cache';
import { Program, resultLimitChars, SandboxError } from './sandbox-protocol';
import { MAX_REASON_LENGTH, Outcome, SANDBOX_SOURCE } from './sandbox-source';

export interface IsolateSandboxOptions {
  memoryLimitMb: number;
  /** Compiled programs kept. */
  cacheSize: number;
}

export interface RunLimits {
  /** CPU time the call may use. */
  cpuLimitMs: number;
  /** Wall-clock backstop, for a call that neither finishes nor uses its CPU time. */
  wallLimitMs: number;
}

/**
 * Longest a synchronous call may hold the thread before it is run again asynchronously; see
 * IsolateSandbox.run.
 */
const SYNC_BUDGET_MS = 5;
const SYNC_BUDGET_NS = BigInt(SYNC_BUDGET_MS * 1_000_000);

/**
 * How long a call whose isolate was disposed (CPU time used up) may take to return: a builtin
 * that ignores termination (flattening a huge string) can run on for seconds, and its thread's
 * CPU time would be counted against the next call.
 */
const DISPOSE_GRACE_MS = 250;

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
 * One isolate whose intrinsics are frozen, running one call at a time; built on first use and
 * again after it was disposed (memory limit, CPU time), so a lost isolate costs the call that lost
 * it and nothing else.
 *
 * `run` is what a sandbox process uses for any code: a program runs with the asynchronous `apply`
 * until a run has shown it cheap (at most SYNC_BUDGET_MS of CPU time), then with `applySync`
 * under a wall-clock timeout of SYNC_BUDGET_MS, which costs about a quarter of `apply`. A
 * synchronous call over the budget runs again asynchronously, where CPU time is what counts:
 * running a call again is safe because it has no effect outside the isolate (arguments are JSON
 * copies, intrinsics are frozen, nothing of the host is reachable). An asynchronous call is
 * stopped when the process has used `cpuLimitMs` of CPU time since it began, which is the call's
 * own as the process runs nothing else meanwhile: time spent waiting for a CPU does not count.
 *
 * `runSync` is for the programs bounded-expression.ts proves small, run in the service's own
 * process on its thread.
 */
export class IsolateSandbox {
  private sandbox: Sandbox | undefined;
  /** How each program is run; a program not in the map runs asynchronously. */
  private readonly callMode = new WeakMap<Program, 'sync' | 'async'>();
  /** A disposed isolate's call that had not returned within DISPOSE_GRACE_MS. */
  private stuckCall = false;
  /** Longest result a call hands back (see resultLimitChars). */
  private readonly maxChars: number;

  constructor(private readonly options: IsolateSandboxOptions) {
    this.maxChars = resultLimitChars(options.memoryLimitMb);
  }

  /** Whether a call outlived its isolate: the process should end rather than run more. */
  get stuck(): boolean {
    return this.stuckCall;
  }

  /**
   * Runs `program` with the JSON array `argsJson` as its arguments and returns its output: the
   * result's JSON for an expression or a function body, the rendered text for a template.
   *
   * @throws SandboxError
   */
  async run(program: Program, argsJson: string, limits: RunLimits): Promise<string> {
    const sandbox = this.current();
    const args = [this.compiled(sandbox, program, limits.wallLimitMs), argsJson, this.maxChars];
    if (this.callMode.get(program) === 'sync') {
      let output: string | undefined;
      try {
        output = sandbox.run.applySync(undefined, args, { timeout: Math.min(SYNC_BUDGET_MS, limits.wallLimitMs) }) as string;
      } catch (error) {
        if (!isTimeout(error)) {
          if (sandbox.isolate.isDisposed) this.callMode.set(program, 'async');
          throw this.explain(error, sandbox);
        }
        // Over the budget in wall time, which a busy machine can cause on its own: the
        // asynchronous run below measures CPU time and decides.
      }
      if (output !== undefined) return decode(output);
    }
    const cpuBefore = sandbox.isolate.cpuTime;
    let output: string;
    try {
      output = decode((await this.callAsync(sandbox, args, limits)) as string);
    } catch (error) {
      if (error instanceof SandboxError && error.failure !== 'CODE_ERROR') this.callMode.set(program, 'async');
      throw error;
    }
    const cheap = !sandbox.isolate.isDisposed && sandbox.isolate.cpuTime - cpuBefore <= SYNC_BUDGET_NS;
    if (this.callMode.get(program) !== 'async') this.callMode.set(program, cheap ? 'sync' : 'async');
    return output;
  }

  /** @throws SandboxError */
  runSync(program: Program, argsJson: string, wallLimitMs: number): string {
    const sandbox = this.current();
    const id = this.compiled(sandbox, program, wallLimitMs);
    let output: string;
    try {
      output = sandbox.run.applySync(undefined, [id, argsJson, this.maxChars], { timeout: wallLimitMs }) as string;
    } catch (error) {
      throw this.explain(error, sandbox, wallLimitMs);
    }
    return decode(output);
  }

  /** Builds the isolate now rather than on the first call. */
  prepare(): void {
    this.current();
  }

  dispose(): void {
    if (this.sandbox !== undefined) this.retire(this.sandbox);
  }

  private current(): Sandbox {
    return (this.sandbox ??= this.createSandbox());
  }

  /** Synchronous: compiling runs no user code and takes time in proportion to the source, which the caller bounds. */
  private compiled(sandbox: Sandbox, program: Program, wallLimitMs: number): number {
    let id = sandbox.programs.get(program);
    if (id !== undefined) return id;
    let compiled: number | string;
    try {
      const args = [program.paramsJson, program.codesJson, program.literalsJson];
      compiled = sandbox.compile.applySync(undefined, args, { timeout: wallLimitMs }) as number | string;
    } catch (error) {
      throw this.explain(error, sandbox);
    }
    if (typeof compiled === 'string') throw new SandboxError('CODE_ERROR', compiled);
    id = compiled;
    sandbox.programs.set(program, id);
    return id;
  }

  private callAsync(sandbox: Sandbox, args: unknown[], limits: RunLimits): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const started = process.cpuUsage();
      let outOfCpu = false;
      let grace: NodeJS.Timeout | undefined;
      const checkCpu = () => {
        const used = cpuMillis(process.cpuUsage(started));
        if (used < limits.cpuLimitMs) {
          // CPU time cannot grow faster than wall time on the isolate's one thread.
          watchdog = setTimeout(checkCpu, Math.max(1, limits.cpuLimitMs - used));
          return;
        }
        outOfCpu = true;
        this.retire(sandbox);
        grace = setTimeout(() => {
          this.stuckCall = true;
          reject(cpuExhausted(limits.cpuLimitMs));
        }, DISPOSE_GRACE_MS);
      };
      let watchdog = setTimeout(checkCpu, limits.cpuLimitMs);
      const settle = (outcome: () => void) => {
        clearTimeout(watchdog);
        clearTimeout(grace);
        if (outOfCpu) reject(cpuExhausted(limits.cpuLimitMs));
        else outcome();
      };
      sandbox.run.apply(undefined, args, { timeout: limits.wallLimitMs }).then(
        (value: unknown) => settle(() => resolve(value)),
        (error: unknown) => settle(() => reject(this.explain(error, sandbox, limits.wallLimitMs))),
      );
    });
  }

  private explain(error: unknown, sandbox: Sandbox, wallLimitMs?: number): SandboxError {
    if (isTimeout(error)) {
      this.retire(sandbox);
      return new SandboxError('SANDBOX_UNRESPONSIVE', `did not finish within ${wallLimitMs ?? 'its'} ms of wall-clock time`);
    }
    if (sandbox.isolate.isDisposed) {
      // Only isolated-vm's memory limit disposes an isolate without settling the call first.
      this.retire(sandbox);
      return new SandboxError('MEMORY_LIMIT', `used more than its ${this.options.memoryLimitMb} MB of memory`);
    }
    // `run` and `compile` never throw, so what is left is a promise the code rejected and left
    // unhandled, which isolated-vm reports as the call's error.
    return new SandboxError('CODE_ERROR', clip(`Uncaught (in promise) ${describe(error)}`));
  }

  /** Disposes the isolate; the next call builds a new one. */
  private retire(sandbox: Sandbox): void {
    if (this.sandbox === sandbox) this.sandbox = undefined;
    if (!sandbox.isolate.isDisposed) sandbox.isolate.dispose();
  }

  private createSandbox(): Sandbox {
    const isolate = new ivm.Isolate({ memoryLimit: this.options.memoryLimitMb });
    try {
      const context = isolate.createContextSync();
      const api = context.evalSync(SANDBOX_SOURCE, { reference: true });
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
      return sandbox;
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  }
}

function cpuMillis(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

function cpuExhausted(cpuLimitMs: number): SandboxError {
  return new SandboxError('TIMEOUT', `used more than its ${cpuLimitMs} ms of CPU time`);
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

function decode(output: string): string {
  switch (output[0]) {
    case Outcome.VALUE:
      return output.slice(1);
    case Outcome.THREW:
    case Outcome.NOT_JSON:
      throw new SandboxError('CODE_ERROR', output.slice(1));
    case Outcome.CODE_THREW: {
      const { message, line, column } = JSON.parse(output.slice(1)) as { message: string; line: number | null; column: number | null };
      throw new SandboxError('CODE_ERROR', message, { line, column });
    }
    case Outcome.TOO_LARGE:
      throw new SandboxError('RESULT_TOO_LARGE', output.slice(1));
    case Outcome.CODE_NOT_JSON: {
      const { reason, path } = JSON.parse(output.slice(1)) as { reason: string; path: string | null };
      throw new SandboxError('CODE_ERROR', `result is not JSON: ${reason}`, { path });
    }
    default:
      throw new SandboxError('SANDBOX_CRASHED', 'sandbox returned an unknown outcome');
  }
}

function describe(error: unknown): string {
  return isErrorLike(error) ? `${String(error.name)}: ${String(error.message)}` : String(error);
}

function clip(text: string): string {
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH)}…` : text;
}
