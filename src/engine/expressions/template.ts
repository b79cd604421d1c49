/** A template cut at its `${...}` insertions: `literals.length === codes.length + 1`. */
export interface TemplateParts {
  literals: string[];
  codes: string[];
}

/** A string that contains `${...}` is a template; any other string is one expression. */
export function isTemplate(source: string): boolean {
  const open = source.indexOf('${');
  return open !== -1 && source.indexOf('}', open + 2) !== -1;
}

/**
 * Cuts a template into literal text and the code of each insertion. The closing brace of an
 * insertion is found by skipping nested braces, string and template literals and comments, so
 * `${ {a: 1}.a }` and `${ "}" }` work; a regular expression literal holding a brace or a quote
 * does not (write `new RegExp("...")` instead).
 *
 * @throws TemplateSyntaxError when an insertion is not closed
 */
export function splitTemplate(template: string): TemplateParts {
  const literals: string[] = [];
  const codes: string[] = [];
  let literalStart = 0;
  for (let open = template.indexOf('${'); open !== -1; open = template.indexOf('${', literalStart)) {
    const close = findInsertionEnd(template, open + 2);
    if (close === -1) {
      throw new TemplateSyntaxError(`unterminated \${ at offset ${open}`);
    }
    literals.push(template.slice(literalStart, open));
    codes.push(template.slice(open + 2, close));
    literalStart = close + 1;
  }
  literals.push(template.slice(literalStart));
  return { literals, codes };
}

export class TemplateSyntaxError extends Error {
  override readonly name = 'TemplateSyntaxError';
}

/** Index of the `}` closing an insertion whose code starts at `from`, or -1. */
function findInsertionEnd(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const char = text[i];
    switch (char) {
      case '"':
      case "'":
        i = findQuoteEnd(text, i + 1, char);
        break;
      case '`':
        i = findTemplateLiteralEnd(text, i + 1);
        break;
      case '/':
        if (text[i + 1] === '/') {
          i = text.indexOf('\n', i + 2);
        } else if (text[i + 1] === '*') {
          const end = text.indexOf('*/', i + 2);
          i = end === -1 ? -1 : end + 1;
        }
        break;
      case '{':
        depth++;
        break;
      case '}':
        if (depth === 0) return i;
        depth--;
        break;
    }
    if (i === -1) return -1;
  }
  return -1;
}

function findQuoteEnd(text: string, from: number, quote: string): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) return i;
  }
  return -1;
}

function findTemplateLiteralEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const char = text[i];
    if (char === '\\') {
      i++;
    } else if (char === '`') {
      return i;
    } else if (char === '$' && text[i + 1] === '{') {
      i = findInsertionEnd(text, i + 2);
      if (i === -1) return -1;
    }
  }
  return -1;
}
