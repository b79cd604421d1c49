import { parseExpressionAt, type Node as AstNode } from 'acorn';
import { isTemplate } from './template';

/**
 * A preview of an expression's value in the browser, against the data of an earlier run.
 *
 * The server evaluates expressions in an isolated-vm sandbox; the console may not run user text
 * as code at all (its Content-Security-Policy forbids eval, rightly: it holds an API key). So this
 * walks the parsed expression (acorn, the parser the server uses too) and computes the plain
 * JavaScript that expressions are made of: literals, names, member access, operators, templates,
 * arrow callbacks and the usual pure methods of strings, numbers, arrays, Math, JSON and Object.
 * Anything else is "not previewed" (never guessed), and the server's answer at run time is the
 * one that counts.
 */
export type Preview = { ok: true; value: unknown } | { ok: false; reason: string };

/** Steps one preview may take: a preview of a huge loop stops instead of freezing the page. */
const STEP_LIMIT = 200_000;
/**
 * Characters (of strings) and elements (of arrays) one preview may build, all values together: a
 * preview of `'x'.repeat(2**28).split('')` stops before it allocates, instead of taking the tab's
 * memory. Operations whose result size is known beforehand (repeat, padStart, padEnd, +) are
 * refused before they run.
 */
const SIZE_BUDGET = 4_000_000;
const FORBIDDEN = new Set([
  '__proto__',
  'prototype',
  'constructor',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
]);

class NotPreviewed extends Error {}

const STRING_METHODS = new Set([
  'at',
  'charAt',
  'concat',
  'endsWith',
  'includes',
  'indexOf',
  'lastIndexOf',
  'padEnd',
  'padStart',
  'repeat',
  'replace',
  'replaceAll',
  'slice',
  'split',
  'startsWith',
  'substring',
  'toLowerCase',
  'toUpperCase',
  'trim',
  'trimEnd',
  'trimStart',
  'toString',
  'localeCompare',
  'normalize',
]);
const ARRAY_METHODS = new Set([
  'at',
  'concat',
  'every',
  'filter',
  'find',
  'findIndex',
  'findLast',
  'findLastIndex',
  'flat',
  'flatMap',
  'includes',
  'indexOf',
  'join',
  'lastIndexOf',
  'map',
  'reduce',
  'reduceRight',
  'slice',
  'some',
  'toReversed',
  'toSorted',
  'with',
  'keys',
  'values',
  'entries',
]);
const NUMBER_METHODS = new Set(['toFixed', 'toPrecision', 'toString']);
const MATH = new Set([
  'abs',
  'ceil',
  'floor',
  'round',
  'trunc',
  'sign',
  'max',
  'min',
  'pow',
  'sqrt',
  'cbrt',
  'log',
  'log10',
  'log2',
  'exp',
  'random',
  'PI',
  'E',
]);

const GLOBALS: Record<string, unknown> = {
  Math,
  JSON: { stringify: JSON.stringify, parse: JSON.parse },
  Object: {
    keys: Object.keys,
    values: Object.values,
    entries: Object.entries,
    fromEntries: Object.fromEntries,
    assign: (...a: object[]) => Object.assign({}, ...a),
  },
  // From an array or a string only: an array-like `{ length: 2 ** 30 }` would be allocated whole.
  Array: {
    isArray: Array.isArray,
    from: (v: unknown) => {
      if (Array.isArray(v) || typeof v === 'string') return Array.from(v);
      throw new NotPreviewed('Array.from of anything but an array or a string');
    },
  },
  Number,
  String,
  Boolean,
  parseInt,
  parseFloat,
  isNaN,
  encodeURIComponent,
  decodeURIComponent,
  Date: { now: Date.now, parse: Date.parse },
  undefined,
  NaN,
  Infinity,
};

export function previewExpression(source: string, scope: Record<string, unknown>): Preview {
  try {
    const value = isTemplate(source) ? previewTemplate(source, scope) : evaluateSource(source, scope);
    return { ok: true, value: value === undefined ? undefined : JSON.parse(JSON.stringify(value) ?? 'null') };
  } catch (error) {
    return { ok: false, reason: error instanceof NotPreviewed ? `not previewed: ${error.message}` : (error as Error).message };
  }
}

function previewTemplate(source: string, scope: Record<string, unknown>): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const start = source.indexOf('${', i);
    if (start < 0) {
      out += source.slice(i);
      break;
    }
    out += source.slice(i, start);
    const parsed = parseExpressionAt(source, start + 2, { ecmaVersion: 'latest', preserveParens: true });
    let end = parsed.end;
    while (end < source.length && /\s/.test(source[end])) end++;
    if (source[end] !== '}') throw new Error(`the template's \${ at ${start} is not closed by }`);
    const value = new Evaluator(scope).run(parsed);
    out += typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
    i = end + 1;
  }
  return out;
}

function evaluateSource(source: string, scope: Record<string, unknown>): unknown {
  const parsed = parseExpressionAt(source, 0, { ecmaVersion: 'latest', preserveParens: true });
  if (source.slice(parsed.end).trim())
    throw new Error(`unexpected text after the expression at ${parsed.end}: ${source.slice(parsed.end).trim().slice(0, 20)}`);
  return new Evaluator(scope).run(parsed);
}

type Env = Map<string, unknown>;

class Evaluator {
  private steps = 0;
  private built = 0;
  constructor(private readonly scope: Record<string, unknown>) {}

  /** Counts what a value holds against the size budget; refuses once past it. */
  private charge<T>(value: T, size = sizeOf(value)): T {
    this.built += size;
    if (this.built > SIZE_BUDGET)
      throw new NotPreviewed(`it builds values of more than ${SIZE_BUDGET.toLocaleString('en')} characters or items`);
    return value;
  }

  run(node: AstNode): unknown {
    return this.eval(node, new Map());
  }

  private eval(node: any, env: Env): unknown {
    if (++this.steps > STEP_LIMIT) throw new NotPreviewed('it takes too many steps');
    switch (node.type) {
      case 'Literal':
        if (node.regex) throw new NotPreviewed('regular expressions');
        return node.value;
      case 'Identifier':
        if (env.has(node.name)) return env.get(node.name);
        if (Object.prototype.hasOwnProperty.call(this.scope, node.name)) return this.scope[node.name];
        if (Object.prototype.hasOwnProperty.call(GLOBALS, node.name)) return GLOBALS[node.name];
        throw new Error(`${node.name} is not defined`);
      case 'TemplateLiteral':
        return this.charge(
          node.quasis
            .map((q: any, i: number) => q.value.cooked + (i < node.expressions.length ? String(this.eval(node.expressions[i], env)) : ''))
            .join(''),
        );
      case 'ChainExpression':
        return this.chain(node.expression, env).value;
      case 'MemberExpression':
      case 'CallExpression':
        return this.chain(node, env).value;
      case 'UnaryExpression': {
        if (
          node.operator === 'typeof' &&
          node.argument.type === 'Identifier' &&
          !env.has(node.argument.name) &&
          !(node.argument.name in this.scope)
        )
          return 'undefined';
        const v: any = this.eval(node.argument, env);
        switch (node.operator) {
          case '!':
            return !v;
          case '-':
            return -v;
          case '+':
            return +v;
          case '~':
            return ~v;
          case 'typeof':
            return typeof v;
          case 'void':
            return undefined;
          default:
            throw new NotPreviewed(`the ${node.operator} operator`);
        }
      }
      case 'BinaryExpression': {
        const [left, right] = [this.eval(node.left, env), this.eval(node.right, env)];
        if (node.operator === '+' && (typeof left === 'string' || typeof right === 'string'))
          this.charge(null, String(left).length + String(right).length);
        return binary(node.operator, left, right);
      }
      case 'LogicalExpression': {
        const left = this.eval(node.left, env);
        if (node.operator === '&&') return left ? this.eval(node.right, env) : left;
        if (node.operator === '||') return left ? left : this.eval(node.right, env);
        return left ?? this.eval(node.right, env);
      }
      case 'ConditionalExpression':
        return this.eval(node.test, env) ? this.eval(node.consequent, env) : this.eval(node.alternate, env);
      case 'ArrayExpression': {
        const out: unknown[] = [];
        for (const element of node.elements) {
          if (element === null) out.push(undefined);
          else if (element.type === 'SpreadElement') out.push(...(this.eval(element.argument, env) as unknown[]));
          else out.push(this.eval(element, env));
        }
        return this.charge(out);
      }
      case 'ObjectExpression': {
        const out: Record<string, unknown> = {};
        for (const property of node.properties) {
          if (property.type === 'SpreadElement') Object.assign(out, this.eval(property.argument, env));
          else {
            if (property.kind !== 'init' || property.method) throw new NotPreviewed('getters, setters and methods');
            const key = property.computed ? String(this.eval(property.key, env)) : (property.key.name ?? String(property.key.value));
            if (FORBIDDEN.has(key)) throw new NotPreviewed(`the key ${key}`);
            out[key] = this.eval(property.value, env);
          }
        }
        return out;
      }
      case 'ArrowFunctionExpression':
        return this.arrow(node, env);
      case 'SequenceExpression':
        return node.expressions.reduce((_: unknown, e: any) => this.eval(e, env), undefined);
      case 'ParenthesizedExpression':
        return this.eval(node.expression, env);
      default:
        throw new NotPreviewed(describeNode(node.type));
    }
  }

  /** A member or call chain; `short` when an optional link met null or undefined. */
  private chain(node: any, env: Env): { value: unknown; short?: boolean } {
    if (node.type === 'MemberExpression') {
      const object = this.chain(node.object, env);
      if (object.short) return object;
      if (node.optional && object.value == null) return { value: undefined, short: true };
      const key = node.computed ? this.eval(node.property, env) : node.property.name;
      return { value: member(object.value, key) };
    }
    if (node.type === 'CallExpression') {
      const args = () =>
        node.arguments.flatMap((a: any) => (a.type === 'SpreadElement' ? (this.eval(a.argument, env) as unknown[]) : [this.eval(a, env)]));
      if (node.callee.type === 'MemberExpression') {
        const object = this.chain(node.callee.object, env);
        if (object.short) return object;
        if (node.callee.optional && object.value == null) return { value: undefined, short: true };
        const name = node.callee.computed ? this.eval(node.callee.property, env) : node.callee.property.name;
        const fn = method(object.value, String(name));
        if (node.optional && fn == null) return { value: undefined, short: true };
        const values = args();
        this.charge(null, resultSize(object.value, String(name), values));
        return { value: this.charge((fn as (...a: unknown[]) => unknown).apply(object.value, values)) };
      }
      const callee = this.chain(node.callee, env);
      if (callee.short) return callee;
      if (node.optional && callee.value == null) return { value: undefined, short: true };
      if (typeof callee.value !== 'function' || !isCallable(callee.value))
        throw new Error(`${describeCallee(node.callee)} is not a function`);
      return { value: this.charge((callee.value as (...a: unknown[]) => unknown)(...args())) };
    }
    return { value: this.eval(node, env) };
  }

  private arrow(node: any, env: Env): (...args: unknown[]) => unknown {
    if (node.body.type === 'BlockStatement' || node.async || node.generator) throw new NotPreviewed('functions with a body');
    const fn = (...args: unknown[]) => {
      const inner = new Map(env);
      node.params.forEach((param: any, i: number) => {
        if (param.type !== 'Identifier') throw new NotPreviewed('destructured parameters');
        inner.set(param.name, args[i]);
      });
      return this.eval(node.body, inner);
    };
    ARROWS.add(fn);
    return fn;
  }
}

/** What a value holds, as the size budget counts it: a string's characters, an array's elements. */
const sizeOf = (value: unknown) => (typeof value === 'string' ? value.length : Array.isArray(value) ? value.length : 0);

/** The size a method's result will have, when it can be known before it runs (0 otherwise: it is counted once built). */
function resultSize(object: unknown, name: string, args: unknown[]): number {
  if (typeof object !== 'string') return 0;
  const count = Number(args[0]);
  if (name === 'repeat') return Number.isFinite(count) ? Math.max(0, count) * object.length : 0;
  if (name === 'padStart' || name === 'padEnd') return Number.isFinite(count) ? Math.max(0, count) : 0;
  return 0;
}

/** Functions the preview may call: those of GLOBALS and the arrows the expression wrote itself. */
const ARROWS = new WeakSet<object>();
const GLOBAL_FUNCTIONS = new Set<unknown>([
  ...Object.values(GLOBALS).filter((v) => typeof v === 'function'),
  ...Object.values(GLOBALS).flatMap((v) => (typeof v === 'object' && v !== null ? Object.values(v) : [])),
  ...[...MATH].map((name) => (Math as unknown as Record<string, unknown>)[name]),
]);
const isCallable = (fn: unknown) => ARROWS.has(fn as object) || GLOBAL_FUNCTIONS.has(fn);

function member(object: unknown, key: unknown): unknown {
  if (object === null || object === undefined) throw new TypeError(`Cannot read properties of ${object} (reading '${String(key)}')`);
  const name = String(key);
  if (FORBIDDEN.has(name)) throw new NotPreviewed(`the property ${name}`);
  if (typeof object === 'string' || Array.isArray(object)) {
    if (name === 'length') return object.length;
    if (/^\d+$/.test(name)) return (object as ArrayLike<unknown>)[Number(name)];
  }
  if (object === Math) {
    if (!MATH.has(name)) throw new NotPreviewed(`Math.${name}`);
    return (Math as unknown as Record<string, unknown>)[name];
  }
  if (typeof object === 'object' && Object.prototype.hasOwnProperty.call(object, name)) return (object as Record<string, unknown>)[name];
  return undefined;
}

function method(object: unknown, name: string): unknown {
  if (object === null || object === undefined) throw new TypeError(`Cannot read properties of ${object} (reading '${name}')`);
  if (FORBIDDEN.has(name)) throw new NotPreviewed(`the property ${name}`);
  const allowed =
    (typeof object === 'string' && STRING_METHODS.has(name)) ||
    (Array.isArray(object) && ARRAY_METHODS.has(name)) ||
    (typeof object === 'number' && NUMBER_METHODS.has(name));
  if (allowed) {
    const fn = (object as unknown as Record<string, unknown>)[name] as (...a: unknown[]) => unknown;
    // Array iterators come back as arrays, so that what they hold is JSON.
    return ['keys', 'values', 'entries'].includes(name) ? (...a: unknown[]) => [...(fn.apply(object, a) as Iterable<unknown>)] : fn;
  }
  const value = member(object, name);
  if (typeof value === 'function' && isCallable(value)) return value;
  if (value === undefined) throw new TypeError(`${typeof object === 'object' ? 'the object' : typeof object}.${name} is not a function`);
  throw new NotPreviewed(`calling ${name}`);
}

function binary(operator: string, a: any, b: any): unknown {
  switch (operator) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return a / b;
    case '%':
      return a % b;
    case '**':
      return a ** b;
    case '==':
      return a == b;
    case '!=':
      return a != b;
    case '===':
      return a === b;
    case '!==':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    case '&':
      return a & b;
    case '|':
      return a | b;
    case '^':
      return a ^ b;
    case '<<':
      return a << b;
    case '>>':
      return a >> b;
    case '>>>':
      return a >>> b;
    case 'in':
      if (typeof b !== 'object' || b === null) throw new TypeError(`Cannot use 'in' operator to search for '${String(a)}' in ${String(b)}`);
      return Object.prototype.hasOwnProperty.call(b, a);
    default:
      throw new NotPreviewed(`the ${operator} operator`);
  }
}

const describeNode = (type: string) =>
  type
    .replace(/Expression$/, '')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase() + ' expressions';
const describeCallee = (node: any): string => (node.type === 'Identifier' ? node.name : 'the callee');
