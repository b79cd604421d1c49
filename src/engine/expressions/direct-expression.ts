import { parseExpressionAt } from 'acorn';

/**
 * Expressions of the commonest shapes (`input.query.length > 3`, `{"text": input.query}`,
 * `nodes.check.ok ? 'a' : 'b'`) evaluated by the host on the same JSON copies of their inputs the
 * isolate would get, instead of a call into the isolate (7-28 µs of CPU each on the runs bench,
 * against about one for the copy). Only for sources bounded-expression.ts already lets run in
 * the service's process; anything outside the few forms below, or any value a form does not handle
 * exactly as the isolate would, is answered with BAIL and the isolate evaluates it as before, so a
 * failure keeps the isolate's own message.
 *
 * The forms: literals (not regular expressions), the names given (nothing global), member access
 * (plain and computed, optional chaining) to an own property of an object, an element or `length`
 * of an array or a string, `typeof`, `!`, `void`, unary `-` `+` `~` and binary operators (not `in`,
 * `instanceof`) on primitive operands, logical and conditional operators, sequences, array and
 * object literals, template literals without insertions. The values are parsed JSON, so they hold
 * nothing but plain objects, arrays and primitives; a member not of those kinds (a method, a
 * prototype's property) is a BAIL, never a host value.
 */
export const BAIL: unique symbol = Symbol('bail');

/** Evaluates with the arguments in the order of `params` (parsed from the isolate's argument JSON). */
export type DirectExpression = (args: readonly unknown[]) => unknown;

type AstNode = { type: string; [key: string]: any };
type Evaluate = (args: readonly unknown[]) => unknown;

/** Thrown (and caught at the top) where the host would not answer exactly as the isolate. */
class Bail {}
const BAILED = new Bail();
/** An optional member of a chain met null or undefined: the whole chain is undefined. */
class ShortCircuit {}
const SHORT = new ShortCircuit();

const bail = (): never => {
  throw BAILED;
};

const GLOBAL_VALUES: Record<string, unknown> = { undefined: undefined, NaN: NaN, Infinity: Infinity };
const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;
const isPrimitive = (value: unknown): boolean => value === null || (typeof value !== 'object' && typeof value !== 'function');

/** A compiled form of `code` over `params`, or null when it is not built only of the forms above. */
export function compileDirect(code: string, params: readonly string[]): DirectExpression | null {
  let root: AstNode;
  try {
    root = parseExpressionAt(code, 0, { ecmaVersion: 'latest', sourceType: 'script', preserveParens: true }) as unknown as AstNode;
    if (code.slice(root.end as number).trim() !== '') return null;
  } catch {
    return null;
  }
  let evaluate: Evaluate;
  try {
    evaluate = compileNode(root, params);
  } catch (error) {
    if (error === BAILED) return null;
    throw error;
  }
  return (args) => {
    try {
      return evaluate(args);
    } catch (error) {
      if (error === BAILED) return BAIL;
      if (error === SHORT) return undefined;
      throw error;
    }
  };
}

function compileNode(node: AstNode, params: readonly string[]): Evaluate {
  switch (node.type) {
    case 'Literal': {
      if (node.regex !== undefined || node.bigint !== undefined) return bail();
      const value = node.value as unknown;
      return () => value;
    }
    case 'Identifier': {
      const index = params.indexOf(node.name as string);
      if (index >= 0) return (args) => args[index];
      // The isolate's globals that are values (frozen there, as here); any other global is the isolate's to read.
      if (Object.prototype.hasOwnProperty.call(GLOBAL_VALUES, node.name)) {
        const value = GLOBAL_VALUES[node.name as string];
        return () => value;
      }
      return bail();
    }
    case 'ParenthesizedExpression':
      return compileNode(node.expression, params);
    case 'ChainExpression': {
      const inner = compileNode(node.expression, params);
      return (args) => {
        try {
          return inner(args);
        } catch (error) {
          if (error === SHORT) return undefined;
          throw error;
        }
      };
    }
    case 'MemberExpression':
      return compileMember(node, params);
    case 'TemplateLiteral': {
      if ((node.expressions as AstNode[]).length > 0) return bail();
      const text = (node.quasis as AstNode[])[0].value.cooked as string | undefined;
      if (typeof text !== 'string') return bail();
      return () => text;
    }
    case 'UnaryExpression':
      return compileUnary(node.operator as string, compileNode(node.argument, params));
    case 'BinaryExpression':
      return compileBinary(node.operator as string, compileNode(node.left, params), compileNode(node.right, params));
    case 'LogicalExpression': {
      const left = compileNode(node.left, params);
      const right = compileNode(node.right, params);
      switch (node.operator) {
        case '&&':
          return (args) => left(args) && right(args);
        case '||':
          return (args) => left(args) || right(args);
        case '??':
          return (args) => left(args) ?? right(args);
      }
      return bail();
    }
    case 'ConditionalExpression': {
      const test = compileNode(node.test, params);
      const consequent = compileNode(node.consequent, params);
      const alternate = compileNode(node.alternate, params);
      return (args) => (test(args) ? consequent(args) : alternate(args));
    }
    case 'SequenceExpression': {
      const parts = (node.expressions as AstNode[]).map((part) => compileNode(part, params));
      return (args) => {
        let value: unknown;
        for (const part of parts) value = part(args);
        return value;
      };
    }
    case 'ArrayExpression': {
      const elements = (node.elements as Array<AstNode | null>).map((element) =>
        element === null || element.type === 'SpreadElement' ? bail() : compileNode(element, params),
      );
      return (args) => elements.map((element) => element(args));
    }
    case 'ObjectExpression': {
      const properties = (node.properties as AstNode[]).map((property) => {
        if (property.type !== 'Property' || property.kind !== 'init' || property.method || property.computed || property.shorthand)
          return bail();
        const key = property.key.type === 'Identifier' ? (property.key.name as string) : String(property.key.value);
        if (key === '__proto__') return bail();
        return { key, value: compileNode(property.value, params) };
      });
      return (args) => {
        const object: Record<string, unknown> = {};
        for (const { key, value } of properties) object[key] = value(args);
        return object;
      };
    }
    default:
      return bail();
  }
}

function compileMember(node: AstNode, params: readonly string[]): Evaluate {
  const object = compileNode(node.object, params);
  const optional = node.optional === true;
  const property: Evaluate = node.computed
    ? compileNode(node.property, params)
    : node.property.type === 'Identifier'
      ? (
          (name: string) => () =>
            name
        )(node.property.name as string)
      : bail();
  return (args) => {
    const target = object(args);
    if (target === null || target === undefined) {
      if (optional) throw SHORT;
      return bail();
    }
    const key = property(args);
    if (typeof key !== 'string' && typeof key !== 'number') return bail();
    return member(target, String(key));
  };
}

/** `target[key]` as the isolate reads it from the same JSON, or a BAIL. */
function member(target: unknown, key: string): unknown {
  if (typeof target === 'string') {
    if (key === 'length') return target.length;
    if (ARRAY_INDEX.test(key)) return Number(key) < target.length ? target[Number(key)] : undefined;
    return bail();
  }
  if (Array.isArray(target)) {
    if (key === 'length') return target.length;
    if (ARRAY_INDEX.test(key)) return target[Number(key)];
    return bail();
  }
  if (typeof target !== 'object' || target === null) return bail();
  if (Object.prototype.hasOwnProperty.call(target, key)) return (target as Record<string, unknown>)[key];
  // Absent: undefined, unless the isolate would find something on Object.prototype.
  return key in Object.prototype ? bail() : undefined;
}

function compileUnary(operator: string, argument: Evaluate): Evaluate {
  switch (operator) {
    case '!':
      return (args) => !argument(args);
    case 'typeof':
      return (args) => typeof argument(args);
    case 'void':
      return (args) => void argument(args);
    case '-':
      return (args) => -(primitive(argument(args)) as number);
    case '+':
      return (args) => +(primitive(argument(args)) as number);
    case '~':
      return (args) => ~(primitive(argument(args)) as number);
  }
  return bail();
}

/** Operators convert objects by calling their methods, in the isolate on its own copies: only primitives here. */
function primitive(value: unknown): unknown {
  return isPrimitive(value) ? value : bail();
}

function compileBinary(operator: string, left: Evaluate, right: Evaluate): Evaluate {
  const op = BINARY[operator];
  if (op === undefined) return bail();
  return (args) => {
    const a = primitive(left(args));
    return op(a, primitive(right(args)));
  };
}

const BINARY: Record<string, (a: any, b: any) => unknown> = {
  '==': (a, b) => a == b,
  '!=': (a, b) => a != b,
  '===': (a, b) => a === b,
  '!==': (a, b) => a !== b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
  '%': (a, b) => a % b,
  '**': (a, b) => a ** b,
  '<<': (a, b) => a << b,
  '>>': (a, b) => a >> b,
  '>>>': (a, b) => a >>> b,
  '&': (a, b) => a & b,
  '|': (a, b) => a | b,
  '^': (a, b) => a ^ b,
};

/**
 * The value `JSON.parse` of the isolate's answer gives (undefined and non-finite numbers as null,
 * -0 as 0), or BAIL for a result the isolate would refuse or hand back otherwise (a non-finite
 * number or undefined inside an object or array, a result over `maxChars`).
 */
export function asAnswer(value: unknown, maxChars: number): unknown {
  switch (typeof value) {
    case 'undefined':
      return null;
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value + 0 : null;
    case 'string':
      // Its JSON is at most six characters a character (\\u escapes), plus the quotes.
      return value.length * 6 + 2 > maxChars ? BAIL : value;
  }
  if (value === null) return null;
  let json: string;
  try {
    json = JSON.stringify(value, strictly);
  } catch (error) {
    if (error === BAILED) return BAIL;
    throw error;
  }
  return json.length > maxChars ? BAIL : JSON.parse(json);
}

function strictly(this: unknown, _key: string, value: unknown): unknown {
  if (value === undefined || (typeof value === 'number' && !Number.isFinite(value))) throw BAILED;
  return value;
}
