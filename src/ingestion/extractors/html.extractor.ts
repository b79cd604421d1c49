import { HTMLElement, Node, NodeType, parse, TextNode } from 'node-html-parser';
import { ExtractedDocument } from './extracted-document';
import { decodeText } from './text-decoding';

/** Elements whose content is never reading text. */
const DROPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object']);

/** Elements that start a new paragraph; everything else flows inline. */
const BLOCKS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'caption',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'legend',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'title',
  'ul',
]);

/**
 * Separators between pieces of text, weakest first. Boundaries only raise the pending separator,
 * and it is written once, before the next visible text: so nested blocks and the whitespace
 * between tags never pile up into runs of blank lines, as in a browser's innerText.
 */
enum Break {
  None,
  Space,
  Cell,
  Line,
  Paragraph,
}
const BREAK_TEXT = ['', ' ', '\t', '\n', '\n\n'];

/**
 * Visible text of an HTML page: scripts, styles and templates dropped, entities decoded, block
 * elements separated by blank lines, table rows as lines with tab-separated cells.
 */
export function extractHtml(bytes: Buffer): ExtractedDocument {
  // The parser would keep a doctype or XML declaration as text.
  const html = decodeText(bytes).replace(/^\s*(<\?xml[^>]*>\s*)?(<!doctype[^>]*>)?/i, '');
  const root = parse(html, {
    comment: false,
    // Elements listed false are skipped whole by the parser; pre is left out so its markup is parsed.
    blockTextElements: { script: false, style: false, noscript: false, template: false },
  });
  return { segments: [{ text: visibleText(root) }] };
}

const LEAVE_PRE = Symbol('leave pre');

/** Iterative walk, so deeply nested markup cannot overflow the stack. */
function visibleText(root: HTMLElement): string {
  const out: string[] = [];
  let pending = Break.None;
  const raise = (to: Break) => {
    if (to > pending) pending = to;
  };
  const write = (text: string) => {
    if (out.length) out.push(BREAK_TEXT[pending]);
    out.push(text);
    pending = Break.None;
  };
  const stack: Array<Node | Break | typeof LEAVE_PRE> = [root];
  let preDepth = 0;
  while (stack.length) {
    const item = stack.pop()!;
    if (item === LEAVE_PRE) {
      preDepth--;
    } else if (typeof item === 'number') {
      raise(item);
    } else if (item.nodeType === NodeType.TEXT_NODE) {
      const text = (item as TextNode).text;
      if (preDepth > 0) {
        if (text) write(text);
        continue;
      }
      const collapsed = text.replace(/\s+/g, ' ');
      if (collapsed.startsWith(' ')) raise(Break.Space);
      const words = collapsed.trim();
      if (words) write(words);
      if (collapsed.endsWith(' ')) raise(Break.Space);
    } else if (item.nodeType === NodeType.ELEMENT_NODE) {
      const element = item as HTMLElement;
      const tag = element.rawTagName?.toLowerCase() ?? '';
      if (DROPPED.has(tag)) continue;
      if (tag === 'br') {
        write('');
        raise(Break.Line);
        continue;
      }
      const boundary = boundaryOf(tag);
      raise(boundary.before);
      stack.push(boundary.after);
      if (tag === 'pre') {
        preDepth++;
        stack.push(LEAVE_PRE);
      }
      for (let i = element.childNodes.length - 1; i >= 0; i--) stack.push(element.childNodes[i]);
    }
  }
  return out.join('');
}

function boundaryOf(tag: string): { before: Break; after: Break } {
  if (tag === 'tr') return { before: Break.Line, after: Break.Line };
  if (tag === 'td' || tag === 'th') return { before: Break.None, after: Break.Cell };
  if (BLOCKS.has(tag)) return { before: Break.Paragraph, after: Break.Paragraph };
  return { before: Break.None, after: Break.None };
}
