import { parseExpressionAt } from 'acorn';

/**
 * The guard that lets an expression run in the service's own process (isolate-sandbox.adapter.ts,
 * `runSync`) rather than in a sandbox process: an expression built only of the forms below runs
 * no code of its own and no builtin that loops or allocates beyond its inputs, so its time and
 * memory are bounded by (number of name references + 1) x (size of its inputs) + its own length.
 *
 * Allowed: literals (not BigInt, whose arithmetic can allocate 128 MB from a short literal),
 * names, `this`, member access (computed and optional), template literals without a tag, unary
 * (not `delete`), binary, logical and conditional operators, the comma operator, array literals
 * and object literals with plain keys.
 *
 * Refused, so the expression goes to a sandbox process: any call (`f()`, `new`, tagged templates,
 * `import()`), function and class literals (a class's static block runs without a call),
 * assignment and update (which reuse a value, so a few characters can double a string many times
 * over), spread (one element per character of a string), and object literal keys that are
 * computed or that JavaScript calls on its own (`toString`, `valueOf`, `toJSON`,
 * `toLocaleString`, `__proto__`): `{ __proto__: Array.prototype, length: 1e9 } + ''` runs a builtin
 * join over a billion elements without a single call in the source.
 */
export interface ExpressionBound {
  /** Whether the expression is built only of the allowed forms. */
  bounded: boolean;
  /** Name references in it: how many times its inputs can be copied. */
  references: number;
}

const UNBOUNDED: ExpressionBound = { bounded: false, references: 0 };

/** Keys JavaScript reads and calls by itself when converting or serialising an object. */
const IMPLICITLY_CALLED = new Set(['toString', 'valueOf', 'toJSON', 'toLocaleString', '__proto__']);

type AstNode = { type: string; [key: string]: any };

export function expressionBound(code: string): ExpressionBound {
  let root: AstNode;
  try {
    root = parseExpressionAt(code, 0, { ecmaVersion: 'latest', sourceType: 'script', preserveParens: true }) as unknown as AstNode;
    // Anything after the expression (a second statement) is the sandbox's to refuse.
    if (code.slice(root.end as number).trim() !== '') return UNBOUNDED;
  } catch {
    return UNBOUNDED;
  }
  let references = 0;
  const pending: AstNode[] = [root];
  while (pending.length > 0) {
    const node = pending.pop()!;
    switch (node.type) {
      case 'Literal':
        if (node.bigint !== undefined) return UNBOUNDED;
        break;
      case 'Identifier':
        references++;
        break;
      case 'ThisExpression':
        break;
      case 'MemberExpression':
        pending.push(node.object);
        if (node.computed) pending.push(node.property);
        break;
      case 'ChainExpression':
      case 'ParenthesizedExpression':
        pending.push(node.expression);
        break;
      case 'TemplateLiteral':
        pending.push(...node.expressions);
        break;
      case 'UnaryExpression':
        if (node.operator === 'delete') return UNBOUNDED;
        pending.push(node.argument);
        break;
      case 'BinaryExpression':
      case 'LogicalExpression':
        pending.push(node.left, node.right);
        break;
      case 'ConditionalExpression':
        pending.push(node.test, node.consequent, node.alternate);
        break;
      case 'SequenceExpression':
        pending.push(...node.expressions);
        break;
      case 'ArrayExpression':
        for (const element of node.elements as Array<AstNode | null>) {
          if (element === null) continue;
          if (element.type === 'SpreadElement') return UNBOUNDED;
          pending.push(element);
        }
        break;
      case 'ObjectExpression':
        for (const property of node.properties as AstNode[]) {
          if (property.type !== 'Property' || property.kind !== 'init' || property.method || property.computed) return UNBOUNDED;
          const key = property.key.type === 'Identifier' ? property.key.name : String(property.key.value);
          if (IMPLICITLY_CALLED.has(key)) return UNBOUNDED;
          pending.push(property.value);
        }
        break;
      default:
        return UNBOUNDED;
    }
  }
  return { bounded: true, references };
}
