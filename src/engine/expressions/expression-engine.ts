import { AppError, ErrorCode } from '../../common/app-error';
import type { AppConfig } from '../../config/app-config';
import { IsolatePool, Program, SandboxError } from './isolate-pool.adapter';
import { BODY } from './sandbox-source';
import { LruCache } from '../../common/lru-cache';
import { isTemplate, splitTemplate, TemplateSyntaxError } from './template';

export { isTemplate } from './template';

/**
 * Names an expression can use, e.g. `{ input, item, variables, nodes: { <nodeId>: output } }`.
 * A frozen value is taken as unchanging: it is turned into JSON once, however many evaluations
 * (expressions, items) it is offered to; freeze only what nothing will modify.
 */
export interface ExpressionScope {
  [name: string]: unknown;
}

export interface ExpressionEngineOptions {
  /** Isolates, i.e. evaluations that can run at the same time. */
  poolSize: number;
  /** Heap limit of each isolate; an evaluation that exceeds it fails and its isolate is replaced. */
  memoryLimitMb: number;
  /** Longest run of one evaluation. */
  timeoutMs: number;
  /** Parsed sources kept, and compiled programs kept per isolate. */
  cacheSize?: number;
}

const DEFAULT_CACHE_SIZE = 1000;
/** isolated-vm refuses smaller heaps. */
const MIN_MEMORY_LIMIT_MB = 8;
/** Longest expression text quoted in an error's details. */
const MAX_QUOTED_SOURCE = 500;

/** A source parsed once; `programs` holds one compiled form per list of names it is given. */
interface ParsedSource {
  readonly codes: string[];
  /** A template's literal text, `null` for an expression, BODY for a function body. */
  readonly literals: string[] | null | typeof BODY;
  /** Every identifier-like token in the source: a superset of the names it can refer to. */
  readonly identifiers: ReadonlySet<string>;
  readonly programs: Map<string, Program>;
}

/**
 * Evaluates user-written expressions and templates in an isolated-vm pool: no access to the host,
 * a memory limit, a timeout, values in and out as JSON. A failing evaluation (syntax, exception,
 * result that is not JSON, timeout, memory) is an `AppError(EXPRESSION_FAILED)` whose details are
 * `{ expression, reason }`; an aborted one is CANCELED, or the signal's reason when that is an
 * AppError; any call after `close()` is UNAVAILABLE.
 *
 * Only the scope names that occur in a source are copied into the isolate, so a scope name
 * assembled at run time from strings is not defined; a frozen value (the executor's `nodes` and
 * `variables`) is serialised once, not once per expression and item.
 */
export class ExpressionEngine {
  private readonly pool: IsolatePool;
  private readonly expressions: LruCache<string, ParsedSource>;
  private readonly templates: LruCache<string, ParsedSource>;
  private readonly bodies: LruCache<string, ParsedSource>;

  /** JSON of the frozen scope values seen, while they are alive. */
  private readonly frozenJson = new WeakMap<object, string>();

  constructor(options: ExpressionEngineOptions) {
    const cacheSize = options.cacheSize ?? DEFAULT_CACHE_SIZE;
    requireInteger('poolSize', options.poolSize, 1);
    requireInteger('memoryLimitMb', options.memoryLimitMb, MIN_MEMORY_LIMIT_MB);
    requireInteger('timeoutMs', options.timeoutMs, 1);
    requireInteger('cacheSize', cacheSize, 1);
    this.pool = new IsolatePool({ ...options, cacheSize });
    this.expressions = new LruCache(cacheSize);
    this.templates = new LruCache(cacheSize);
    this.bodies = new LruCache(cacheSize);
  }

  static fromConfig(config: AppConfig): ExpressionEngine {
    return new ExpressionEngine({
      poolSize: config.EXPRESSION_POOL_SIZE,
      memoryLimitMb: config.EXPRESSION_MEMORY_MB,
      timeoutMs: config.EXPRESSION_TIMEOUT_MS,
    });
  }

  /**
   * A string that contains `${...}` is a template (result: string); otherwise the whole string is
   * one JS expression (result: any JSON value).
   */
  async evaluate(source: string, scope: ExpressionScope, options: { signal?: AbortSignal } = {}): Promise<unknown> {
    return isTemplate(source)
      ? this.run(this.parseTemplate(source), source, scope, options.signal)
      : this.run(this.parseExpression(source), source, scope, options.signal);
  }

  /** The whole of `code` is one expression, `${` included; `undefined` comes back as `null`. */
  async evaluateExpression(code: string, scope: ExpressionScope): Promise<unknown> {
    return this.run(this.parseExpression(code), code, scope, undefined);
  }

  /**
   * Text with `${...}` insertions. An inserted string goes in as is, null and undefined as nothing,
   * numbers and booleans as text, other values as their JSON.
   */
  async renderTemplate(template: string, scope: ExpressionScope): Promise<string> {
    return (await this.run(this.parseTemplate(template), template, scope, undefined)) as string;
  }

  /**
   * Runs a function body (the Code node): statements whose `return` gives the result, copied out
   * as JSON; the scope's names are its variables. Same isolates, limits and errors as expressions.
   */
  async runCode(code: string, scope: ExpressionScope, options: { signal?: AbortSignal } = {}): Promise<unknown> {
    let parsed = this.bodies.get(code);
    if (parsed === undefined) {
      parsed = { codes: [code], literals: BODY, identifiers: identifiersIn(code), programs: new Map() };
      this.bodies.set(code, parsed);
    }
    return this.run(parsed, code, scope, options.signal);
  }

  /** Rejects evaluations still waiting and disposes the isolates; later calls fail as UNAVAILABLE. */
  async close(): Promise<void> {
    await this.pool.close();
    this.expressions.clear();
    this.templates.clear();
    this.bodies.clear();
  }

  private async run(parsed: ParsedSource, source: string, scope: ExpressionScope, signal: AbortSignal | undefined): Promise<unknown> {
    if (parsed.codes.length === 0) return (parsed.literals as string[])[0];
    const params = Object.keys(scope).filter((name) => parsed.identifiers.has(name));
    const program = programFor(parsed, params);
    let argsJson: string;
    try {
      argsJson = `[${params.map((name) => this.jsonOf(scope[name])).join(',')}]`;
    } catch (error) {
      throw expressionFailed(source, `scope is not JSON-serialisable: ${(error as Error).message}`);
    }
    let output: string;
    try {
      output = await this.pool.run(program, argsJson, signal);
    } catch (error) {
      throw toAppError(error, source, signal);
    }
    return Array.isArray(parsed.literals) ? output : JSON.parse(output);
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
      parsed = { codes: [code], literals: null, identifiers: identifiersIn(code), programs: new Map() };
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
      parsed = { ...parts, identifiers: identifiersIn(parts.codes.join('\n')), programs: new Map() };
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

function toAppError(error: unknown, source: string, signal: AbortSignal | undefined): AppError {
  if (!(error instanceof SandboxError)) {
    return new AppError(ErrorCode.INTERNAL, 'Expression sandbox failed', { cause: error });
  }
  switch (error.failure) {
    case 'failed':
      return expressionFailed(source, error.reason);
    case 'aborted':
      return signal?.reason instanceof AppError
        ? signal.reason
        : new AppError(ErrorCode.CANCELED, 'Expression evaluation was canceled', { cause: signal?.reason });
    case 'closed':
      return new AppError(ErrorCode.UNAVAILABLE, 'Expression engine is closed');
  }
}

function expressionFailed(source: string, reason: string): AppError {
  const expression = source.length > MAX_QUOTED_SOURCE ? `${source.slice(0, MAX_QUOTED_SOURCE)}…` : source;
  return new AppError(ErrorCode.EXPRESSION_FAILED, `Expression failed: ${reason}`, { details: { expression, reason } });
}

function requireInteger(name: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    throw new AppError(ErrorCode.INTERNAL, `ExpressionEngine: ${name} must be an integer >= ${min}, got ${value}`);
  }
}
