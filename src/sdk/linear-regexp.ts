import type { RE2JS as RE2JSClass } from 're2js';

/**
 * The regular expressions users write (JSON Schema `pattern` and `patternProperties`, in approval
 * fields, tool input schemas, agent output schemas, and the schemas outside MCP servers send) run
 * on RE2's engine (re2js), never on V8's backtracking one: a match takes time in proportion to the
 * program's size times the text's length, whatever the pattern. Patterns RE2 cannot run in linear
 * time (lookaround, backreferences) are refused when compiled, i.e. when the schema is saved.
 *
 * Linear is not yet cheap: a 20-instruction pattern whose states thrash RE2's DFA takes about a
 * second over a megabyte. So every match is charged `program size x (text length + 1)` against a
 * budget shared by one whole check (see `withPatternBudget`), and a check that would go over it
 * stops with PatternBudgetExceeded instead of holding the service's thread.
 */

/** Longest pattern compiled: with the budget, what keeps one check's time small. */
export const MAX_PATTERN_LENGTH = 1000;

/**
 * Instructions a compiled pattern may have: what bounds the work of each character. A counted
 * repetition copies what it repeats (`[a-z]{0,500}` is 1,000 instructions), so a length is
 * bounded with minLength / maxLength instead.
 */
export const MAX_PROGRAM_SIZE = 100;

/**
 * Program instructions times characters one check may spend on patterns: a value of 1,000
 * characters fits against any pattern allowed (a UUID pattern is 40 instructions, an e-mail one
 * 13). The worst case measured, a pattern whose states defeat RE2's DFA cache so that each
 * character makes a new state, costs about 0.25 us a unit on an idle core (25 ms for the whole
 * budget) and about 2 us at a load of 17 on 2 cores. A value too long for its patterns is
 * refused, saying so.
 */
export const PATTERN_BUDGET = 100_000;

/** A check went over PATTERN_BUDGET: the text is too long for the patterns it must match. */
export class PatternBudgetExceeded extends Error {
  override readonly name = 'PatternBudgetExceeded';
  constructor(
    readonly pattern: string,
    readonly textLength: number,
  ) {
    super(
      `a string of ${textLength} characters is too long to check against the pattern ${JSON.stringify(pattern)} ` +
        `(a check may spend ${PATTERN_BUDGET} pattern steps, instructions times characters): send shorter values`,
    );
  }
}

/** A pattern RE2 refuses, or one too long: the reason says which. */
export class PatternRefused extends Error {
  override readonly name = 'PatternRefused';
}

let engine: typeof RE2JSClass | undefined;
/** Loaded on first use, as ajv is: the rest of the SDK needs no package. */
function re2(): typeof RE2JSClass {
  return (engine ??= (require('re2js') as typeof import('re2js')).RE2JS);
}

let budget: number | null = null;

/**
 * Runs `check` with a fresh PATTERN_BUDGET for the matches it makes (synchronous, so no other
 * check can share it); matches outside any check are charged against a budget of their own each.
 */
export function withPatternBudget<T>(check: () => T): T {
  const outer = budget;
  budget = PATTERN_BUDGET;
  try {
    return check();
  } finally {
    budget = outer;
  }
}

/** Something with `test`, as ajv's `code.regExp` option asks for. */
export interface LinearRegExp {
  test(text: string): boolean;
  toString(): string;
}

/**
 * Compiles `pattern` (JavaScript syntax, `u` semantics as JSON Schema has it) for RE2.
 * @throws PatternRefused when it is too long or uses what RE2 cannot run in linear time
 */
export function linearRegExp(pattern: string): LinearRegExp {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new PatternRefused(`pattern is ${pattern.length} characters long, more than the ${MAX_PATTERN_LENGTH} allowed`);
  }
  const RE2JS = re2();
  let compiled: RE2JSClass;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    throw new PatternRefused(
      `pattern ${JSON.stringify(pattern)} cannot be used: ${(error as Error).message.replace(/^error parsing regexp: /, '')} ` +
        '(patterns run in linear time: no lookahead, lookbehind or backreferences, repetition counts up to 1000)',
    );
  }
  const size = compiled.programSize();
  if (size > MAX_PROGRAM_SIZE) {
    throw new PatternRefused(
      `pattern ${JSON.stringify(pattern)} compiles to ${size} instructions, more than the ${MAX_PROGRAM_SIZE} allowed: ` +
        'bound lengths with minLength and maxLength rather than {m,n}',
    );
  }
  return {
    // ajv keys its cache of compiled patterns by this text.
    toString: () => `/${pattern}/u`,
    test(text: string): boolean {
      const cost = size * (text.length + 1);
      if (budget === null) {
        if (cost > PATTERN_BUDGET) throw new PatternBudgetExceeded(pattern, text.length);
      } else {
        if (cost > budget) throw new PatternBudgetExceeded(pattern, text.length);
        budget -= cost;
      }
      return compiled.test(text);
    },
  };
}
