import type { Logger } from 'pino';
import { AppError, ErrorCode } from '../../common/app-error';
import { LruCache } from '../../common/lru-cache';
import type { AppConfig } from '../../config/app-config';
import { ExpressionBound, expressionBound } from './bounded-expression';
import { codeSyntaxProblem } from './expression-syntax';
import { IsolateSandbox } from './isolate-sandbox.adapter';
import { Program, resultLimitChars, SandboxError, SandboxFailure } from './sandbox-protocol';
import { asAnswer, BAIL, compileDirect, DirectExpression } from './direct-expression';
import { SandboxProcesses } from './sandbox-processes.adapter';
import { BODY } from './sandbox-source';
import { isTemplate, splitTemplate, TemplateSyntaxError } from './template';
import type { JobShare } from '../../domain/job-queue.port';

export { isTemplate } from './template';

/**
 * Names an expression can use, e.g. `{ input, item, variables, nodes: { <nodeId>: output } }`.
 * A frozen value is taken as unchanging: it is turned into JSON once, however many evaluations
 * (expressions, items) it is offered to; freeze only what nothing will modify.
 */
export interface ExpressionScope {
  [name: string]: unknown;
}

/** One evaluation: `signal` stops it; `share` is the run asking, whose fair turn it waits in for a busy sandbox process. */
export interface EvaluationOptions {
  signal?: AbortSignal;
  share?: JobShare;
}

export interface ExpressionEngineOptions {
  /** Sandbox processes, i.e. evaluations outside the service's process that can run at the same time. */
  poolSize: number;
  /** Heap limit of each isolate; an evaluation that exceeds it fails and its isolate is replaced. */
  memoryLimitMb: number;
  /** CPU time one evaluation may use. */
  timeoutMs: number;
  /**
   * Wall-clock backstop of one evaluation, a different failure (SANDBOX_UNRESPONSIVE) from the
   * CPU limit; by default 10 times the CPU limit plus 5 s.
   */
  wallTimeoutMs?: number;
  /** Parsed sources kept, and compiled programs kept per isolate. */
  cacheSize?: number;
  /** Where a sandbox process that died is reported. */
  logger?: Pick<Logger, 'warn'>;
  /**
   * Expressions of the commonest shapes evaluated by the host, on the JSON the isolate would get
   * (direct-expression.ts); default true. False sends every expression to an isolate (for the
   * specs that hold both to the same answers).
   */
  directEvaluation?: boolean;
}

const DEFAULT_CACHE_SIZE = 1000;
/** isolated-vm refuses smaller heaps. */
const MIN_MEMORY_LIMIT_MB = 8;
/** Longest expression text quoted in an error's details. */
const MAX_QUOTED_SOURCE = 500;

/**
 * Arguments (JSON characters) beyond which even a bounded expression goes to a sandbox process:
 * parsing them holds the service's thread, about 1 ms per 100 KB.
 */
const MAX_IN_PROCESS_ARGS_CHARS = 256 * 1024;
/** Arguments (JSON characters) beyond which a bounded expression is left to the isolate rather than evaluated by the host. */
const MAX_DIRECT_ARGS_CHARS = 64 * 1024;
/** Share of the isolate's memory a bounded expression may be shown to need to run in process. */
const IN_PROCESS_MEMORY_SHARE = 8;

/** A source parsed once; `programs` holds one compiled form per list of names it is given. */
interface ParsedSource {
  readonly codes: string[];
  /** A template's literal text, `null` for an expression, BODY for a function body. */
  readonly literals: string[] | null | typeof BODY;
  /** Every identifier-like token in the source: a superset of the names it can refer to. */
  readonly identifiers: ReadonlySet<string>;
  /** Whether it may run in the service's process, see bounded-expression.ts; never for a function body. */
  readonly bound: ExpressionBound;
  readonly programs: Map<string, Program>;
  /** For a bounded expression: its form the host evaluates (direct-expression.ts), per list of names; null where there is none. */
  readonly directs?: Map<string, DirectExpression | null>;
}

/**
 * Evaluates user-written expressions, templates and function bodies (the Code node) in isolates:
 * no access to the host, a memory limit, a CPU-time limit and a wall-clock backstop, values in and
 * out as JSON. Where they run:
 *
 * - in sandbox processes (sandbox-processes.adapter.ts) by default, so that code which kills its
 *   process (V8 ends a process whose isolate runs out of memory in some builtins, whatever
 *   isolated-vm's limit) kills a sandbox process, which is replaced, and not the service;
 * - in one isolate in the service's own process, synchronously, for an expression that
 *   bounded-expression.ts proves small in time and memory for its inputs: the common
 *   `input.x > 3` or `${variables.baseUrl}/path`, which then costs microseconds rather than a
 *   round trip to another process.
 *
 * A failing expression or template is an `AppError(EXPRESSION_FAILED)` whose details are
 * `{ expression, reason, failure }`, its reason starting with the failure's code unless that is
 * CODE_ERROR (`TIMEOUT: used more than its 1000 ms of CPU time`); a failing function body is an
 * AppError whose code is the failure's (CODE_ERROR, TIMEOUT, MEMORY_LIMIT, RESULT_TOO_LARGE, SANDBOX_UNRESPONSIVE,
 * SANDBOX_CRASHED) with details `{ reason, line, column, path }`. An aborted evaluation is
 * CANCELED, or the signal's reason when that is an AppError; any call after `close()` is
 * UNAVAILABLE.
 *
 * Only the scope names that occur in a source are copied into the isolate, so a scope name
 * assembled at run time from strings is not defined; a frozen value (the executor's `nodes` and
 * `variables`) is serialised once, not once per expression and item.
 */
export class ExpressionEngine {
  private readonly processes: SandboxProcesses;
  private readonly inProcess: IsolateSandbox;
  private readonly wallTimeoutMs: number;
  /** Inputs and output a bounded expression may need, in characters, to run in process. */
  private readonly inProcessBudget: number;
  private readonly expressions: LruCache<string, ParsedSource>;
  private readonly templates: LruCache<string, ParsedSource>;
  private readonly bodies: LruCache<string, ParsedSource>;
  private readonly directEvaluation: boolean;
  /** Longest answer (JSON characters) an evaluation may give, in the host as in an isolate. */
  private readonly maxResultChars: number;

  /** JSON of the frozen scope values seen, while they are alive. */
  private readonly frozenJson = new WeakMap<object, string>();
  private closed = false;

  constructor(options: ExpressionEngineOptions) {
    const cacheSize = options.cacheSize ?? DEFAULT_CACHE_SIZE;
    requireInteger('poolSize', options.poolSize, 1);
    requireInteger('memoryLimitMb', options.memoryLimitMb, MIN_MEMORY_LIMIT_MB);
    requireInteger('timeoutMs', options.timeoutMs, 1);
    requireInteger('cacheSize', cacheSize, 1);
    this.wallTimeoutMs = options.wallTimeoutMs ?? options.timeoutMs * 10 + 5000;
    requireInteger('wallTimeoutMs', this.wallTimeoutMs, options.timeoutMs);
    this.processes = new SandboxProcesses({
      processes: options.poolSize,
      memoryLimitMb: options.memoryLimitMb,
      cpuLimitMs: options.timeoutMs,
      wallLimitMs: this.wallTimeoutMs,
      cacheSize,
      logger: options.logger,
    });
    this.inProcess = new IsolateSandbox({ memoryLimitMb: options.memoryLimitMb, cacheSize });
    this.inProcessBudget = (options.memoryLimitMb * 1024 * 1024) / IN_PROCESS_MEMORY_SHARE;
    this.directEvaluation = options.directEvaluation ?? true;
    this.maxResultChars = resultLimitChars(options.memoryLimitMb);
    this.expressions = new LruCache(cacheSize);
    this.templates = new LruCache(cacheSize);
    this.bodies = new LruCache(cacheSize);
  }

  static fromConfig(config: AppConfig, logger?: Pick<Logger, 'warn'>): ExpressionEngine {
    return new ExpressionEngine({
      poolSize: config.EXPRESSION_POOL_SIZE,
      memoryLimitMb: config.EXPRESSION_MEMORY_MB,
      timeoutMs: config.EXPRESSION_TIMEOUT_MS,
      logger,
    });
  }

  /** Ids of the sandbox processes running now (for tests that stop one from outside). */
  get sandboxProcessIds(): number[] {
    return this.processes.processIds;
  }

  /**
   * A string that contains `${...}` is a template (result: string); otherwise the whole string is
   * one JS expression (result: any JSON value).
   */
  async evaluate(source: string, scope: ExpressionScope, options: EvaluationOptions = {}): Promise<unknown> {
    const parsed = isTemplate(source) ? this.parseTemplate(source) : this.parseExpression(source);
    return this.evaluateParsed(parsed, source, scope, options);
  }

  /** The whole of `code` is one expression, `${` included; `undefined` comes back as `null`. */
  async evaluateExpression(code: string, scope: ExpressionScope): Promise<unknown> {
    return this.evaluateParsed(this.parseExpression(code), code, scope, {});
  }

  /**
   * Text with `${...}` insertions. An inserted string goes in as is, null and undefined as nothing,
   * numbers and booleans as text, other values as their JSON.
   */
  async renderTemplate(template: string, scope: ExpressionScope): Promise<string> {
    return (await this.evaluateParsed(this.parseTemplate(template), template, scope, {})) as string;
  }

  /**
   * Runs a function body (the Code node) in a sandbox process: statements whose `return` gives the
   * result, which must be JSON (no NaN, Infinity, undefined in an array, function, BigInt or
   * cycle); the scope's names are its variables. Same limits as expressions.
   */
  async runCode(code: string, scope: ExpressionScope, options: EvaluationOptions = {}): Promise<unknown> {
    let parsed = this.bodies.get(code);
    if (parsed === undefined) {
      parsed = { codes: [code], literals: BODY, identifiers: identifiersIn(code), bound: UNBOUNDED, programs: new Map() };
      this.bodies.set(code, parsed);
    }
    try {
      return await this.run(parsed, scope, options);
    } catch (error) {
      throw error instanceof SandboxError ? codeFailed(error, code, options.signal) : error;
    }
  }

  /** Rejects evaluations still waiting and ends the sandbox processes; later calls fail as UNAVAILABLE. */
  async close(): Promise<void> {
    this.closed = true;
    await this.processes.close();
    this.inProcess.dispose();
    this.expressions.clear();
    this.templates.clear();
    this.bodies.clear();
  }

  private async evaluateParsed(parsed: ParsedSource, source: string, scope: ExpressionScope, options: EvaluationOptions): Promise<unknown> {
    try {
      return await this.run(parsed, scope, options);
    } catch (error) {
      throw error instanceof SandboxError ? expressionError(error, source, options.signal) : error;
    }
  }

  /** @throws SandboxError for the evaluation's failures, AppError for the host's. */
  private async run(parsed: ParsedSource, scope: ExpressionScope, { signal, share }: EvaluationOptions): Promise<unknown> {
    if (parsed.codes.length === 0) return (parsed.literals as string[])[0];
    if (this.closed) throw new SandboxError('closed', 'expression engine is closed');
    if (signal?.aborted) throw new SandboxError('aborted', 'evaluation aborted');
    const params = Object.keys(scope).filter((name) => parsed.identifiers.has(name));
    const program = programFor(parsed, params);
    let argsJson: string;
    try {
      argsJson = `[${params.map((name) => this.jsonOf(scope[name])).join(',')}]`;
    } catch (error) {
      throw new SandboxError('CODE_ERROR', `scope is not JSON-serialisable: ${(error as Error).message}`);
    }
    if (parsed.directs && argsJson.length <= MAX_DIRECT_ARGS_CHARS) {
      const answer = this.direct(parsed, parsed.directs, params, argsJson);
      if (answer !== BAIL) return answer;
    }
    const output = this.fitsInProcess(parsed, argsJson)
      ? this.inProcess.runSync(program, argsJson, this.wallTimeoutMs)
      : await this.processes.run(program, argsJson, signal, share);
    return Array.isArray(parsed.literals) ? output : JSON.parse(output);
  }

  /** What the isolate would answer, from the host's evaluation of the same JSON; BAIL where the isolate must answer. */
  private direct(parsed: ParsedSource, directs: Map<string, DirectExpression | null>, params: string[], argsJson: string): unknown {
    const key = params.join(',');
    let direct = directs.get(key);
    if (direct === undefined) directs.set(key, (direct = compileDirect(parsed.codes[0], params)));
    if (direct === null) return BAIL;
    const value = direct(JSON.parse(argsJson) as unknown[]);
    return value === BAIL ? BAIL : asAnswer(value, this.maxResultChars);
  }

  private fitsInProcess(parsed: ParsedSource, argsJson: string): boolean {
    const { bounded, references } = parsed.bound;
    if (!bounded || argsJson.length > MAX_IN_PROCESS_ARGS_CHARS) return false;
    const sourceChars = parsed.codes.reduce((sum, code) => sum + code.length, 0);
    return (references + 1) * argsJson.length + sourceChars <= this.inProcessBudget;
  }

  /** A value's JSON as an array element (what JSON.stringify leaves out becomes null). */
  private jsonOf(value: unknown): string {
    if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return JSON.stringify(value) ?? 'null';
    let json = this.frozenJson.get(value);
    if (json === undefined) this.frozenJson.set(value, (json = JSON.stringify(value) ?? 'null'));
    return json;
  }

  private parseExpression(code: string): ParsedSource {
    let parsed = this.expressions.get(code);
    if (parsed === undefined) {
      const bound = expressionBound(code);
      const directs = bound.bounded && this.directEvaluation ? new Map<string, DirectExpression | null>() : undefined;
      parsed = {
        codes: [code],
        literals: null,
        identifiers: identifiersIn(code),
        bound,
        programs: new Map(),
        ...(directs ? { directs } : {}),
      };
      this.expressions.set(code, parsed);
    }
    return parsed;
  }

  private parseTemplate(template: string): ParsedSource {
    let parsed = this.templates.get(template);
    if (parsed === undefined) {
      let parts;
      try {
        parts = splitTemplate(template);
      } catch (error) {
        if (error instanceof TemplateSyntaxError) throw expressionFailed(template, error.message);
        throw error;
      }
      parsed = { ...parts, identifiers: identifiersIn(parts.codes.join('\n')), bound: templateBound(parts.codes), programs: new Map() };
      this.templates.set(template, parsed);
    }
    return parsed;
  }
}

function programFor(parsed: ParsedSource, params: string[]): Program {
  const key = params.join(',');
  let program = parsed.programs.get(key);
  if (program === undefined) {
    program = {
      paramsJson: JSON.stringify(params),
      codesJson: JSON.stringify(parsed.codes),
      literalsJson: parsed.literals === null ? '' : parsed.literals === BODY ? BODY : JSON.stringify(parsed.literals),
    };
    parsed.programs.set(key, program);
  }
  return program;
}

function identifiersIn(code: string): Set<string> {
  return new Set(code.match(/[A-Za-z_$][\w$]*/g));
}

const UNBOUNDED: ExpressionBound = { bounded: false, references: 0 };

/** A template is bounded when each insertion is; their references add up. */
function templateBound(codes: string[]): ExpressionBound {
  let references = 0;
  for (const code of codes) {
    const bound = expressionBound(code);
    if (!bound.bounded) return UNBOUNDED;
    references += bound.references;
  }
  return { bounded: true, references };
}

/** The failures that are not the evaluation's: the caller's signal, or the engine closed. */
function hostError(error: SandboxError, signal: AbortSignal | undefined): AppError | null {
  switch (error.failure) {
    case 'aborted':
      return signal?.reason instanceof AppError
        ? signal.reason
        : new AppError(ErrorCode.CANCELED, 'Expression evaluation was canceled', { cause: signal?.reason });
    case 'closed':
      return new AppError(ErrorCode.UNAVAILABLE, 'Expression engine is closed');
    default:
      return null;
  }
}

function expressionError(error: SandboxError, source: string, signal: AbortSignal | undefined): AppError {
  return (
    hostError(error, signal) ??
    expressionFailed(source, error.failure === 'CODE_ERROR' ? error.reason : `${error.failure}: ${error.reason}`, error.failure)
  );
}

function expressionFailed(source: string, reason: string, failure: SandboxFailure = 'CODE_ERROR'): AppError {
  const expression = source.length > MAX_QUOTED_SOURCE ? `${source.slice(0, MAX_QUOTED_SOURCE)}…` : source;
  return new AppError(ErrorCode.EXPRESSION_FAILED, `Expression failed: ${reason}`, { details: { expression, reason, failure } });
}

const CODE_FAILURES: Record<Exclude<SandboxFailure, 'aborted' | 'closed'>, ErrorCode> = {
  CODE_ERROR: ErrorCode.CODE_ERROR,
  TIMEOUT: ErrorCode.TIMEOUT,
  MEMORY_LIMIT: ErrorCode.MEMORY_LIMIT,
  RESULT_TOO_LARGE: ErrorCode.RESULT_TOO_LARGE,
  SANDBOX_UNRESPONSIVE: ErrorCode.SANDBOX_UNRESPONSIVE,
  SANDBOX_CRASHED: ErrorCode.SANDBOX_CRASHED,
};

/** A function body's failure; a syntax error is placed by acorn, as V8's message has no position. */
function codeFailed(error: SandboxError, code: string, signal: AbortSignal | undefined): AppError {
  const host = hostError(error, signal);
  if (host !== null) return host;
  let { line = null, column = null } = error.facts;
  if (line === null && error.failure === 'CODE_ERROR' && error.reason.startsWith('SyntaxError')) {
    const problem = codeSyntaxProblem(code, { strict: true });
    if (problem !== null) ({ line, column } = problem);
  }
  const failure = error.failure as keyof typeof CODE_FAILURES;
  const details = { reason: error.reason, line, column, path: error.facts.path ?? null };
  return new AppError(CODE_FAILURES[failure], `Code failed: ${error.reason}`, { details });
}

function requireInteger(name: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    throw new AppError(ErrorCode.INTERNAL, `ExpressionEngine: ${name} must be an integer >= ${min}, got ${value}`);
  }
}
