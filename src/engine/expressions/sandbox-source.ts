/**
 * Code that runs inside each isolate, kept as source text rather than as a host function turned
 * into a string: a compiler or coverage tool rewriting a host function would change what the
 * isolate receives, and nothing of the host may leak into the sandbox by accident.
 *
 * The script runs once per isolate, in the isolate's only context. It removes the few globals
 * that reach outside an evaluation, freezes every intrinsic so no evaluation can leave state for
 * the next (prototype pollution, replaced built-ins; cheaper than a context per evaluation, which
 * costs about 0.5 ms), and returns `{ compile, run, forget }`:
 *
 * - `compile(paramsJson, codesJson, literalsJson)` returns a program id, or the SyntaxError text.
 *   Each code is compiled by the isolate's own `Function` constructor, which parses the body on
 *   its own: code cannot close the wrapper and declare anything at script level, where it would
 *   outlive the evaluation. `literalsJson` is '' for an expression, BODY for a function body
 *   (the Code node: statements ending in `return`), or a template's literal text.
 * - `run(id, argsJson, maxChars)` returns one string whose first character says what follows: the
 *   result (JSON for an expression, text for a template), the message of an exception, why the
 *   result is not JSON, or that it would be longer than `maxChars` (TOO_LARGE, checked before a
 *   template's text is put together, so that no string longer than that ever leaves the isolate). Nothing the user code throws reaches the host as an exception, so the only ones
 *   the host sees are the sandbox's (timeout, disposal) and a promise the code left rejected.
 *   A function body (the Code node) answers its failures as JSON, so the host can say where:
 *   CODE_THREW `{ message, line, column }` (of the code as written), CODE_NOT_JSON
 *   `{ reason, path }` (the first value JSON cannot hold: NaN, Infinity, undefined in an array, a
 *   function, a symbol, a BigInt, a Promise or a cycle; expressions keep JSON.stringify's
 *   leniency for numbers and undefined).
 * - `forget(id)` drops a program evicted from the host's cache.
 */

/** First character of `run`'s answer. */
export const Outcome = {
  VALUE: '=',
  THREW: '!',
  NOT_JSON: '?',
  CODE_THREW: '#',
  CODE_NOT_JSON: '%',
  TOO_LARGE: '>',
} as const;

/**
 * Lines V8 puts before a function body built by the Function constructor
 * (`function anonymous(<params>\n) {\n`) and the sandbox's own "use strict" line: a stack
 * position's line minus this is the line of the code as written.
 */
export const BODY_LINE_OFFSET = 3;

/** `literalsJson` of a program that is a function body rather than an expression. */
export const BODY = 'body';

/** Longest exception message copied out of the sandbox. */
export const MAX_REASON_LENGTH = 300;

export const SANDBOX_SOURCE = String.raw`
(() => {
  'use strict';
  const { parse, stringify } = JSON;
  const { apply, ownKeys, getPrototypeOf } = Reflect;
  const { defineProperty, freeze, getOwnPropertyDescriptor } = Object;
  const FunctionConstructor = Function;
  const ErrorConstructor = Error;
  const PromiseConstructor = Promise;
  const StringConstructor = String;

  // FinalizationRegistry callbacks run after an evaluation has returned, outside its timeout,
  // and can hold the isolate forever. The others share memory or threads, or compile WebAssembly.
  for (const name of ['FinalizationRegistry', 'SharedArrayBuffer', 'Atomics', 'WebAssembly']) {
    delete globalThis[name];
  }
  // RegExp.$1, RegExp.lastMatch and the like would show one evaluation the last match of another.
  for (const name of ownKeys(RegExp)) {
    if (typeof name === 'string' && name !== 'prototype' && name !== 'length' && name !== 'name') {
      delete RegExp[name];
    }
  }

  // Once prototypes are frozen, assigning a property an instance inherits read-only throws, so
  // err.name = 'X' or obj.toString = fn would fail. These common ones become accessors whose
  // setter gives the instance its own property, and still refuses to change the prototype.
  const errorPrototypes = [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError]
    .map((constructor) => constructor.prototype);
  const overridable = [
    [Object.prototype, ['constructor', 'toString', 'toLocaleString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable']],
    [Function.prototype, ['constructor', 'toString']],
    ...errorPrototypes.map((prototype) => [prototype, ['constructor', 'name', 'message', 'toString']]),
  ];
  for (const [prototype, names] of overridable) {
    for (const name of names) {
      const descriptor = getOwnPropertyDescriptor(prototype, name);
      if (descriptor === undefined || !('value' in descriptor)) continue;
      const { value } = descriptor;
      defineProperty(prototype, name, {
        get() {
          return value;
        },
        set(replacement) {
          if (this === prototype) {
            throw new TypeError("Cannot assign to read only property '" + name + "' of a built-in prototype");
          }
          defineProperty(this, name, { value: replacement, writable: true, enumerable: true, configurable: true });
        },
        enumerable: descriptor.enumerable,
        configurable: false,
      });
    }
  }

  // Intrinsics that no global property leads to; their prototypes are reached from these.
  const unnamedIntrinsics = [
    function* () {},
    async function () {},
    async function* () {},
    (function* () {})(),
    (async function* () {})(),
    [][Symbol.iterator](),
    new Map()[Symbol.iterator](),
    new Set()[Symbol.iterator](),
    ''[Symbol.iterator](),
    /./[Symbol.matchAll](''),
    getOwnPropertyDescriptor((function () { return arguments; })(), 'callee').get,
  ];
  if (typeof Intl === 'object' && typeof Intl.Segmenter === 'function') {
    const segments = new Intl.Segmenter().segment('');
    unnamedIntrinsics.push(segments, segments[Symbol.iterator]());
  }
  const seen = new Set();
  const pending = [globalThis, ...unnamedIntrinsics];
  while (pending.length > 0) {
    const value = pending.pop();
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) {
      continue;
    }
    seen.add(value);
    freeze(value);
    pending.push(getPrototypeOf(value));
    for (const key of ownKeys(value)) {
      const descriptor = getOwnPropertyDescriptor(value, key);
      pending.push(descriptor.value, descriptor.get, descriptor.set);
    }
  }

  const VALUE = '${Outcome.VALUE}';
  const THREW = '${Outcome.THREW}';
  const NOT_JSON = '${Outcome.NOT_JSON}';
  const CODE_THREW = '${Outcome.CODE_THREW}';
  const CODE_NOT_JSON = '${Outcome.CODE_NOT_JSON}';
  const TOO_LARGE = '${Outcome.TOO_LARGE}';
  const BODY_LINE_OFFSET = ${BODY_LINE_OFFSET};
  const { isFinite: numberIsFinite } = Number;
  const { isArray } = Array;
  const { keys } = Object;
  const MapConstructor = Map;
  const MAX_REASON_LENGTH = ${MAX_REASON_LENGTH};

  const clip = (text) =>
    text.length > MAX_REASON_LENGTH ? text.slice(0, MAX_REASON_LENGTH) + '…' : text;

  // Runs user getters (name, message, toString) under the evaluation's timeout, and never throws.
  const describe = (error) => {
    try {
      if (error instanceof ErrorConstructor) {
        return clip(StringConstructor(error.name) + ': ' + StringConstructor(error.message));
      }
      return clip('Uncaught ' + StringConstructor(error));
    } catch {
      return 'Uncaught exception';
    }
  };

  class NotJson {
    constructor(reason) {
      this.reason = reason;
    }
  }
  const TYPE_NAMES = { function: 'a function', symbol: 'a symbol', bigint: 'a BigInt' };

  const refuseNonJson = (key, value) => {
    const typeName = TYPE_NAMES[typeof value];
    const what = typeName !== undefined ? typeName : value instanceof PromiseConstructor ? 'a Promise' : undefined;
    if (what !== undefined) {
      throw new NotJson(key === '' ? 'result is ' + what : 'result holds ' + what + ' at key "' + clip(key) + '"');
    }
    return value;
  };

  const notJsonReason = (error) =>
    error instanceof NotJson ? error.reason : 'result is not serialisable: ' + describe(error);

  // Code results: the cheap check first, the walk that says where only once it failed.
  const refuseNonJsonStrictly = function (key, value) {
    if (typeof value === 'number' ? !numberIsFinite(value) : value === undefined && isArray(this)) throw new NotJson('');
    return refuseNonJson(key, value);
  };

  const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
  const child = (path, key) =>
    IDENTIFIER.test(key) ? path + '.' + key : path + '[' + stringify(key) + ']';

  // Where JSON.stringify would lose or refuse something, following its rules (toJSON first,
  // undefined dropped from objects); null when nothing is wrong.
  const whereNotJson = (holder, key, value, path, ancestors) => {
    if (value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.toJSON === 'function') {
      value = apply(value.toJSON, value, [key]);
    }
    switch (typeof value) {
      case 'number':
        return numberIsFinite(value) ? null : path + ' is ' + StringConstructor(value);
      case 'undefined':
        return isArray(holder) ? path + ' is undefined' : null;
      case 'string':
      case 'boolean':
        return null;
      case 'object':
        break;
      default:
        return path + ' is ' + TYPE_NAMES[typeof value];
    }
    if (value === null) return null;
    if (value instanceof PromiseConstructor) return path + ' is a Promise';
    if (ancestors.has(value)) return path + ' is ' + ancestors.get(value) + ' again (a cycle)';
    ancestors.set(value, path);
    if (isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const found = whereNotJson(value, StringConstructor(i), value[i], path + '[' + i + ']', ancestors);
        if (found !== null) return found;
      }
    } else {
      for (const name of keys(value)) {
        const found = whereNotJson(value, name, value[name], child(path, name), ancestors);
        if (found !== null) return found;
      }
    }
    ancestors.delete(value);
    return null;
  };

  const codeNotJson = (value, error) => {
    let reason;
    let path = null;
    try {
      const found = whereNotJson({ '': value }, '', value, 'result', new MapConstructor());
      if (found !== null) {
        reason = clip(found);
        path = found.slice(0, found.indexOf(' is '));
      }
    } catch (walkError) {
      error = walkError;
    }
    if (reason === undefined) reason = notJsonReason(error);
    return CODE_NOT_JSON + stringify({ reason, path });
  };

  const STACK_POSITION = /\(eval at [^\n]*?, <anonymous>:(\d+):(\d+)\)/;

  // The innermost frame of the user's code in the error's stack, if it has one.
  const codeThrew = (error) => {
    const message = describe(error);
    let line = null;
    let column = null;
    try {
      const stack = error !== null && typeof error === 'object' ? error.stack : undefined;
      const match = typeof stack === 'string' ? STACK_POSITION.exec(stack) : null;
      if (match !== null && match[1] - BODY_LINE_OFFSET >= 1) {
        line = match[1] - BODY_LINE_OFFSET;
        column = +match[2];
      }
    } catch {
      // a stack getter that throws leaves the position unknown
    }
    return CODE_THREW + stringify({ message, line, column });
  };

  const tooLarge = (chars, maxChars) =>
    TOO_LARGE + 'its result would be ' + chars + ' characters long, more than the ' + maxChars + ' a result may have';

  // A string's length is known before it is copied (a rope from repeat() costs no memory until then).
  const outcome = (json, maxChars) => (json.length > maxChars ? tooLarge(json.length, maxChars) : VALUE + json);

  const bodyProgram = (fn) => (argsJson, maxChars) => {
    let value;
    try {
      value = apply(fn, undefined, parse(argsJson));
    } catch (error) {
      return codeThrew(error);
    }
    if (typeof value === 'string' && value.length > maxChars) return tooLarge(value.length + 2, maxChars);
    let json;
    try {
      json = value === undefined ? 'null' : stringify(value, refuseNonJsonStrictly);
    } catch (error) {
      return codeNotJson(value, error);
    }
    return outcome(json, maxChars);
  };

  const toJson = (value) => {
    switch (typeof value) {
      case 'string':
      case 'number':
      case 'boolean':
        return stringify(value);
      case 'undefined':
        return 'null';
    }
    return stringify(value, refuseNonJson);
  };

  // Inside a template, null and undefined render as nothing and objects as their JSON; an object
  // whose JSON is a string (a Date) renders as that string, without quotes.
  const toText = (value) => {
    switch (typeof value) {
      case 'string':
        return value;
      case 'number':
      case 'boolean':
      case 'bigint':
        return StringConstructor(value);
      case 'undefined':
        return '';
    }
    if (value === null) return '';
    const json = stringify(value, refuseNonJson);
    return json.charCodeAt(0) === 34 ? parse(json) : json;
  };

  const expressionProgram = (fn) => (argsJson, maxChars) => {
    let value;
    try {
      value = apply(fn, undefined, parse(argsJson));
    } catch (error) {
      return THREW + describe(error);
    }
    if (typeof value === 'string' && value.length > maxChars) return tooLarge(value.length + 2, maxChars);
    let json;
    try {
      json = toJson(value);
    } catch (error) {
      return NOT_JSON + notJsonReason(error);
    }
    return outcome(json, maxChars);
  };

  const insertion = (index, count) => (count > 1 ? ' (in \${…} #' + (index + 1) + ')' : '');

  const templateProgram = (fns, literals) => (argsJson, maxChars) => {
    const args = parse(argsJson);
    let text = literals[0];
    for (let i = 0; i < fns.length; i++) {
      let value;
      try {
        value = apply(fns[i], undefined, args);
      } catch (error) {
        return THREW + describe(error) + insertion(i, fns.length);
      }
      let piece;
      try {
        piece = toText(value);
      } catch (error) {
        return NOT_JSON + notJsonReason(error) + insertion(i, fns.length);
      }
      const chars = text.length + piece.length + literals[i + 1].length;
      if (chars > maxChars) return tooLarge(chars, maxChars) + insertion(i, fns.length);
      text += piece + literals[i + 1];
    }
    return VALUE + text;
  };

  const programs = new Map();
  let lastId = 0;

  const compile = (paramsJson, codesJson, literalsJson) => {
    const params = parse(paramsJson);
    const codes = parse(codesJson);
    if (literalsJson === '${BODY}') {
      let body;
      try {
        body = new FunctionConstructor(...params, '"use strict";\n' + codes[0] + '\n');
      } catch (error) {
        return describe(error);
      }
      const id = ++lastId;
      programs.set(id, bodyProgram(body));
      return id;
    }
    const fns = [];
    for (const code of codes) {
      let fn;
      try {
        fn = new FunctionConstructor(...params, '"use strict"; return (\n' + code + '\n);');
      } catch (error) {
        return describe(error) + insertion(fns.length, codes.length);
      }
      // Code that closes the parenthesis above early, like "1); other(); (2", holds a ')' with no
      // '(' of its own, which cannot close a bracket as well: parsing as an array element too
      // proves the code is one expression.
      try {
        new FunctionConstructor(...params, '"use strict"; return [\n' + code + '\n];');
      } catch {
        return 'SyntaxError: not a single expression' + insertion(fns.length, codes.length);
      }
      fns.push(fn);
    }
    const id = ++lastId;
    programs.set(id, literalsJson === '' ? expressionProgram(fns[0]) : templateProgram(fns, parse(literalsJson)));
    return id;
  };

  const run = (id, argsJson, maxChars) => programs.get(id)(argsJson, maxChars);

  const forget = (id) => {
    programs.delete(id);
  };

  return { compile, run, forget };
})()
`;
