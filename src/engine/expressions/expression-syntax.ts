import { parse, parseExpressionAt } from 'acorn';
import { isTemplate, splitTemplate, TemplateSyntaxError } from './template';

/** Where a source fails to parse: 1-based line and column, and the 0-based offset. */
export interface SyntaxProblem {
  message: string;
  line: number;
  column: number;
  offset: number;
}

const ECMA = { ecmaVersion: 'latest' as const, sourceType: 'script' as const };
// Parentheses kept as nodes: an expression's end is then its closing parenthesis, not the one inside it.
const EXPRESSION = { ...ECMA, preserveParens: true };

/**
 * Parses an expression-mode value without running it (the sandbox compiles the same text): a
 * string holding `${...}` is a template whose insertions are each one expression, anything else is
 * one expression. Returns where the first problem is, or null.
 */
export function expressionSyntaxProblem(source: string): SyntaxProblem | null {
  if (!isTemplate(source)) return singleExpression(source, 0, source);
  let parts;
  try {
    parts = splitTemplate(source);
  } catch (error) {
    if (!(error instanceof TemplateSyntaxError)) throw error;
    return at(source, source.lastIndexOf('${'), 'unterminated ${...} insertion');
  }
  let offset = 0;
  for (let i = 0; i < parts.codes.length; i++) {
    offset += parts.literals[i].length + 2;
    const problem = singleExpression(parts.codes[i], offset, source);
    if (problem) return problem;
    offset += parts.codes[i].length + 1;
  }
  return null;
}

/**
 * Parses JavaScript that runs as a function body (the Code node): `return` is allowed at the top.
 * `strict`: as the sandbox runs it, where `with`, octal literals and the like are errors too.
 */
export function codeSyntaxProblem(source: string, options: { strict?: boolean } = {}): SyntaxProblem | null {
  const prologue = options.strict ? STRICT_PROLOGUE : '';
  try {
    parse(prologue + source, { ...ECMA, allowReturnOutsideFunction: true });
    return null;
  } catch (error) {
    const problem = fromAcorn(error, 0, prologue + source);
    return prologue ? { ...problem, line: problem.line - 1, offset: problem.offset - prologue.length } : problem;
  }
}

/** A directive on a line of its own, so a problem's column in the code as written is unchanged. */
const STRICT_PROLOGUE = '"use strict";\n';

function singleExpression(code: string, base: number, whole: string): SyntaxProblem | null {
  if (!code.trim()) return at(whole, base, 'empty expression');
  try {
    const node = parseExpressionAt(code, 0, EXPRESSION);
    // What follows the expression may only be blank or comments: "1); other(); (2" is two statements.
    if (!onlyBlank(code.slice(node.end))) fail(node.end);
    return null;
  } catch (error) {
    return fromAcorn(error, base, whole);
  }
}

function onlyBlank(rest: string): boolean {
  try {
    return parse(rest, ECMA).body.length === 0;
  } catch {
    return false;
  }
}

class NotOneExpression extends Error {
  constructor(readonly pos: number) {
    super('not a single expression: only one expression is allowed here');
  }
}

function fail(pos: number): never {
  throw new NotOneExpression(pos);
}

function fromAcorn(error: unknown, base: number, whole: string): SyntaxProblem {
  if (error instanceof NotOneExpression) return at(whole, base + error.pos, error.message);
  if (error instanceof SyntaxError && typeof (error as SyntaxError & { pos?: number }).pos === 'number') {
    // acorn appends " (line:column)" to its messages; the position is given separately here.
    const message = error.message.replace(/ \(\d+:\d+\)$/, '');
    return at(whole, base + (error as SyntaxError & { pos: number }).pos, message);
  }
  throw error;
}

function at(whole: string, offset: number, message: string): SyntaxProblem {
  const before = whole.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return { message, line, column, offset };
}
