import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Socket } from 'node:net';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { LruCache } from '../../common/lru-cache';
import { encodeFrame, FrameReader, FrameTooLarge, Program, resultLimitChars, RunReply, RunRequest, SandboxError } from './sandbox-protocol';
import { FairWaitingList, workShare } from '../../jobs/fair-turns';
import type { JobShare } from '../../domain/job-queue.port';

export interface SandboxProcessesOptions {
  /** Processes, i.e. evaluations that can run at the same time, besides the lane's one (see SandboxProcesses). */
  processes: number;
  /** Heap limit of each process's isolate. */
  memoryLimitMb: number;
  /** CPU time one evaluation may use. */
  cpuLimitMs: number;
  /** Wall-clock backstop of one evaluation, counted from when its process has it. */
  wallLimitMs: number;
  /** Compiled programs kept per process. */
  cacheSize: number;
  logger?: Pick<Logger, 'warn'>;
}

/**
 * Added to the wall-clock backstop before the service kills a process that has not answered:
 * the process's own isolate stops at the backstop, and its answer needs time to arrive.
 */
const ANSWER_GRACE_MS = 2000;

/**
 * What V8 and Node print when they end a process for want of memory: an isolate's heap
 * (`is_heap_oom = 1` after CALL_AND_RETRY_LAST, with no other message) or the process's own.
 */
const OUT_OF_MEMORY =
  /is_heap_oom = 1|CALL_AND_RETRY_LAST|out of memory|heap limit|allocation failed|invalid (?:array|table|string) length|invalid size error/i;

/** Largest answer read from a sandbox process: a result of resultLimitChars in UTF-8, and its header. */
function maxAnswerBytes(memoryLimitMb: number): number {
  return resultLimitChars(memoryLimitMb) * 3 + 64 * 1024;
}

/** Kept of a process's stderr to tell why it died. */
const STDERR_TAIL_CHARS = 4096;

interface Call {
  readonly id: number;
  readonly resolve: (output: string) => void;
  readonly reject: (error: SandboxError) => void;
  backstop?: NodeJS.Timeout;
}

/** One sandbox process, doing one evaluation at a time. */
class SandboxProcess {
  readonly child: ChildProcess;
  private readonly pipe: Socket;
  /** Programs this process has, in the same LRU order as its own cache (see sandbox-process.ts). */
  readonly known: LruCache<number, true>;
  readonly ready: Promise<void>;
  private call: Call | undefined;
  private stderrTail = '';
  private outOfMemory = false;
  exited = false;
  /** The process said it ends after its answer, or was killed: nothing more goes to it. */
  retired = false;
  private killed = false;

  constructor(private readonly options: SandboxProcessesOptions) {
    this.known = new LruCache(options.cacheSize);
    this.child = spawn(process.execPath, [...entryArgs(), String(options.memoryLimitMb), String(options.cacheSize)], {
      // Nothing of the service's environment (secrets) goes to the process that runs user code.
      env: {},
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    this.pipe = this.child.stdio[3] as Socket;
    let markReady: () => void;
    let failStart: (error: SandboxError) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failStart = reject;
    });
    // Settled in the normal course; a caller that gave up waiting must not leave it unhandled.
    this.ready.catch(() => undefined);
    let started = false;
    const reader = new FrameReader(
      (header: RunReply | { ready: true }, payload: string) => {
        if ('ready' in header) {
          started = true;
          markReady();
          return;
        }
        this.answered(header, payload);
      },
      // The isolate refuses a longer result itself (RESULT_TOO_LARGE); a process that sends more
      // anyway is not gathered into the service's memory.
      maxAnswerBytes(options.memoryLimitMb),
    );
    this.pipe.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk);
      } catch (error) {
        if (!(error instanceof FrameTooLarge)) throw error;
        this.abort(new SandboxError('SANDBOX_CRASHED', `its sandbox process sent ${error.message} and was replaced`));
        this.kill();
      }
    });
    this.pipe.on('error', () => undefined);
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (text: string) => {
      const recent = this.stderrTail.slice(-200) + text;
      if (OUT_OF_MEMORY.test(recent)) this.outOfMemory = true;
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
    });
    this.child.once('error', (error) => {
      // spawn itself failed: the next evaluation starts another process.
      this.retired = true;
      if (!started) failStart(new SandboxError('SANDBOX_CRASHED', `its sandbox process could not start: ${error.message}`));
    });
    this.child.once('close', (code, signal) => {
      this.exited = true;
      this.retired = true;
      const failure = this.deathFailure(code, signal);
      if (!started) failStart(failure);
      const call = this.call;
      if (call !== undefined) this.finish(() => call.reject(failure));
      // Killed here, or ended by itself after saying so: nothing to report.
      if (!this.killed && code !== 0) {
        this.options.logger?.warn(
          { code, signal, stderr: this.stderrTail.slice(-1000) },
          `sandbox process ${this.child.pid} ended: ${failure.reason}`,
        );
      }
    });
  }

  get busy(): boolean {
    return this.call !== undefined;
  }

  run(id: number, programId: number, program: Program, argsJson: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const call: Call = { id, resolve, reject };
      this.call = call;
      const send = () => {
        if (this.call !== call) return;
        if (this.retired) {
          this.finish(() => reject(new SandboxError('SANDBOX_CRASHED', 'its sandbox process ended before the evaluation began')));
          return;
        }
        const request: RunRequest = { id, program: programId, cpuLimitMs: this.options.cpuLimitMs, wallLimitMs: this.options.wallLimitMs };
        if (this.known.get(programId) === undefined) {
          this.known.set(programId, true);
          request.source = [program.paramsJson, program.codesJson, program.literalsJson];
        }
        call.backstop = setTimeout(() => {
          this.kill();
          this.finish(() =>
            reject(
              new SandboxError(
                'SANDBOX_UNRESPONSIVE',
                `did not answer within ${this.options.wallLimitMs} ms of wall-clock time; its sandbox process was stopped and replaced`,
              ),
            ),
          );
        }, this.options.wallLimitMs + ANSWER_GRACE_MS);
        this.pipe.write(encodeFrame(request, argsJson));
      };
      this.ready.then(send, (error: SandboxError) => {
        if (this.call === call) this.finish(() => reject(error));
      });
    });
  }

  /** Ends the process at once; its evaluation, if any, fails with the caller's reason. */
  kill(): void {
    this.retired = true;
    this.killed = true;
    if (!this.exited) this.child.kill('SIGKILL');
  }

  /** Closing the pipe ends an idle process (see sandbox-process.ts). */
  close(): void {
    this.retired = true;
    this.pipe.end();
    this.kill();
  }

  /** Rejects the current evaluation (if any) with `error`; the caller decides what it is. */
  abort(error: SandboxError): void {
    if (this.call === undefined) return;
    const { reject } = this.call;
    this.kill();
    this.finish(() => reject(error));
  }

  private answered(reply: RunReply, payload: string): void {
    const call = this.call;
    if (call === undefined || call.id !== reply.id) return;
    if (reply.retiring) this.retired = true;
    this.finish(() =>
      reply.ok ? call.resolve(payload) : call.reject(new SandboxError(reply.failure ?? 'SANDBOX_CRASHED', payload, reply.facts ?? {})),
    );
  }

  private finish(settle: () => void): void {
    clearTimeout(this.call?.backstop);
    this.call = undefined;
    settle();
  }

  private deathFailure(code: number | null, signal: NodeJS.Signals | null): SandboxError {
    if (this.outOfMemory) {
      return new SandboxError(
        'MEMORY_LIMIT',
        `used more than its ${this.options.memoryLimitMb} MB of memory (its sandbox process died and was replaced)`,
      );
    }
    return new SandboxError(
      'SANDBOX_CRASHED',
      `its sandbox process ended unexpectedly (${signal ?? `exit code ${code}`}) and was replaced`,
    );
  }
}

interface Waiting {
  readonly share: JobShare | undefined;
  readonly program: Program;
  readonly argsJson: string;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (output: string) => void;
  readonly reject: (error: unknown) => void;
  onAbort?: () => void;
}

/**
 * A few sandbox processes (sandbox-process.ts), each running one evaluation at a time in its own
 * isolate, so that code which kills its process (V8's fatal out-of-memory error, a builtin that
 * never returns) costs that evaluation a clear failure and the service nothing. The processes
 * all start at the pool's first evaluation, and one that ended is started again at the next
 * evaluation, whichever process that one goes to: started on demand, a process took 100 to 900 ms
 * to answer its first evaluation, and that evaluation was whoever's came when the others were busy
 * (a light user's trivial Code node beside a heavy user's CPU-bound ones, issue 26). Evaluations beyond the number of processes wait here, taken
 * fairly across the users and workflows of the runs asking (workShare; src/jobs/fair-turns.ts),
 * rather than in a process, so that when one dies the service knows which single
 * evaluation was inside it.
 *
 * One more process, the lane, takes an evaluation that finds every other process busy when its
 * user has no evaluation running or waiting here (as the queues' lane, src/jobs/fair-turns.ts): in
 * fair order alone a light user's evaluation still waited for one of a heavy user's to end, which
 * may take its whole CPU limit. Evaluations outside a run (no share) never take the lane.
 *
 * Limits: the process stops an evaluation at `cpuLimitMs` of CPU time (TIMEOUT); the service kills
 * a process that has not answered `wallLimitMs` (plus a grace) after it was given the evaluation
 * (SANDBOX_UNRESPONSIVE), and one whose evaluation's signal fired.
 */
export class SandboxProcesses {
  /** The pool's processes, then the lane's. */
  private readonly slots: Array<SandboxProcess | undefined>;
  /** The user of the evaluation in each slot ('' for none or an evaluation outside a run). */
  private readonly users: string[];
  private readonly lane: number;
  private readonly waiting = new FairWaitingList<Waiting>();
  private readonly programIds = new WeakMap<Program, number>();
  private lastProgramId = 0;
  private lastCallId = 0;
  private closed = false;

  constructor(private readonly options: SandboxProcessesOptions) {
    this.lane = options.processes;
    this.slots = Array.from({ length: options.processes + 1 }, () => undefined);
    this.users = this.slots.map(() => '');
  }

  /** Ids of the processes running now (for tests that stop one from outside). */
  get processIds(): number[] {
    return this.slots.flatMap((slot) => (slot?.child.pid !== undefined && !slot.exited ? [slot.child.pid] : []));
  }

  /**
   * Runs `program` with the JSON array `argsJson` as its arguments in a sandbox process and
   * returns its output.
   *
   * @throws SandboxError
   */
  run(program: Program, argsJson: string, signal?: AbortSignal): Promise<string> {
    if (this.closed) return Promise.reject(closedError());
    if (signal?.aborted) return Promise.reject(abortedError());
    this.startIdleSlots();
    const share = workShare.getStore();
    const index = this.freeSlot(share);
    if (index >= 0) return this.execute(index, share, program, argsJson, signal);
    return new Promise<string>((resolve, reject) => {
      const waiting: Waiting = { share, program, argsJson, signal, resolve, reject };
      if (signal !== undefined) {
        waiting.onAbort = () => {
          this.waiting.remove(waiting);
          reject(abortedError());
        };
        signal.addEventListener('abort', waiting.onAbort, { once: true });
      }
      this.waiting.push(waiting);
    });
  }

  /** A free process of the pool, else the lane's for a user with nothing here; -1 when the evaluation waits. */
  private freeSlot(share: JobShare | undefined): number {
    const index = this.slots.findIndex((slot, i) => i < this.lane && !slot!.busy);
    if (index >= 0 || !share?.user || this.slots[this.lane]!.busy) return index;
    const light = !this.users.includes(share.user) && !this.waiting.holds(share.user);
    return light ? this.lane : -1;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiting of this.waiting.drain()) {
      stopListening(waiting);
      waiting.reject(closedError());
    }
    for (const slot of this.slots) {
      slot?.abort(closedError());
      slot?.close();
    }
  }

  private async execute(
    index: number,
    share: JobShare | undefined,
    program: Program,
    argsJson: string,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    let sandbox = this.slots[index];
    if (sandbox === undefined || sandbox.retired) {
      sandbox?.kill();
      sandbox = new SandboxProcess(this.options);
      this.slots[index] = sandbox;
    }
    const running = sandbox;
    const onAbort = () => running.abort(abortedError());
    signal?.addEventListener('abort', onAbort, { once: true });
    this.users[index] = share?.user ?? '';
    try {
      return await running.run(++this.lastCallId, this.programId(program), program, argsJson);
    } finally {
      this.users[index] = '';
      signal?.removeEventListener('abort', onAbort);
      this.startNextWaiting(index);
    }
  }

  /** A process for every slot that has none or whose process ended, unless an evaluation is still settling there. */
  private startIdleSlots(): void {
    this.slots.forEach((slot, index) => {
      if (slot !== undefined && (slot.busy || !slot.retired)) return;
      slot?.kill();
      this.slots[index] = new SandboxProcess(this.options);
    });
  }

  /** The next in fair order, when a process of the pool frees (the lane's takes only those that find the pool busy). */
  private startNextWaiting(index: number): void {
    if (index === this.lane || this.slots[index]?.busy) return;
    const next = this.waiting.shift();
    if (next === undefined) return;
    stopListening(next);
    this.execute(index, next.share, next.program, next.argsJson, next.signal).then(next.resolve, next.reject);
  }

  private programId(program: Program): number {
    let id = this.programIds.get(program);
    if (id === undefined) this.programIds.set(program, (id = ++this.lastProgramId));
    return id;
  }
}

/**
 * The process's program: compiled beside this file in dist/, or the TypeScript source run through
 * the same transform as the tests when the service itself runs from source (jest, bench scripts).
 */
function entryArgs(): string[] {
  const compiled = join(__dirname, 'sandbox-process.js');
  const flags = ['--no-node-snapshot'];
  if (existsSync(compiled)) return [...flags, compiled];
  const root = resolve(__dirname, '..', '..', '..');
  return [...flags, '--require', join(root, 'scripts', 'swc-register.js'), join(__dirname, 'sandbox-process.ts')];
}

function stopListening(waiting: Waiting): void {
  if (waiting.onAbort !== undefined) waiting.signal?.removeEventListener('abort', waiting.onAbort);
}

function closedError(): SandboxError {
  return new SandboxError('closed', 'expression engine is closed');
}

function abortedError(): SandboxError {
  return new SandboxError('aborted', 'evaluation aborted');
}
