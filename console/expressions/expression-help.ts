import { isObject } from '../json-schema';
import { isTemplate } from './template';

/**
 * What expressions of the node being edited can read, for completion and preview: the names the
 * server puts in scope (`input` or `item` by run mode, `variables`, `nodes.<id>`) and, when the
 * workflow ran before, their values in its latest run.
 */
export interface ExpressionScope {
  runMode: 'input' | 'item';
  nodeIds: string[];
  variables: string[];
  /** Values from the latest run, or null before the first one. */
  sample: { runId: string; values: Record<string, unknown> } | null;
}

const KEYWORDS = new Set(['true', 'false', 'null', 'undefined', 'typeof', 'in', 'new', 'void', 'instanceof', 'NaN', 'Infinity']);
const SCOPE_ROOTS = new Set(['input', 'item', 'nodes', 'variables']);
const TOKEN =
  /(\/\/.*$|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|`(?:[^`\\]|\\.)*`?)|(\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b)|([A-Za-z_$][\w$]*)|(=>|===|!==|==|!=|<=|>=|&&|\|\||\?\?|\?\.|[-+*/%<>!?:=&|^~.,;()[\]{}])/gm;

/** The source as spans for the highlight layer; a template's text outside `${}` stays plain. */
export function highlight(source: string): { text: string; kind: string }[] {
  if (!isTemplate(source)) return tokens(source);
  const parts: { text: string; kind: string }[] = [];
  const pattern = /\$\{([^}]*)\}?/g;
  let last = 0;
  for (let m = pattern.exec(source); m; m = pattern.exec(source)) {
    if (m.index > last) parts.push({ text: source.slice(last, m.index), kind: 'tpl' });
    parts.push({ text: '${', kind: 'punc' }, ...tokens(m[1]));
    if (m[0].endsWith('}')) parts.push({ text: '}', kind: 'punc' });
    last = m.index + m[0].length;
  }
  if (last < source.length) parts.push({ text: source.slice(last), kind: 'tpl' });
  return parts;
}

function tokens(source: string): { text: string; kind: string }[] {
  const out: { text: string; kind: string }[] = [];
  let last = 0;
  for (const m of source.matchAll(TOKEN)) {
    if (m.index! > last) out.push({ text: source.slice(last, m.index), kind: 'plain' });
    const [text, string, number, name] = m;
    const kind = string
      ? text.startsWith('//')
        ? 'comment'
        : 'str'
      : number
        ? 'num'
        : name
          ? KEYWORDS.has(text)
            ? 'kw'
            : SCOPE_ROOTS.has(text)
              ? 'root'
              : 'name'
          : 'punc';
    out.push({ text, kind });
    last = m.index! + text.length;
  }
  if (last < source.length) out.push({ text: source.slice(last), kind: 'plain' });
  return out;
}

/** The dotted path being typed before the caret (`nodes.orders.to` -> path nodes.orders, prefix to). */
export function pathAtCaret(before: string): { path: string[]; prefix: string } | null {
  const m = /((?:[A-Za-z_$][\w$]*\??\.)*)([A-Za-z_$][\w$]*)?$/.exec(before);
  if (!m || (!m[1] && !m[2])) return null;
  // A name right after another name's end is no path (`abc def`); after `.` of a number neither.
  const start = m.index;
  if (start > 0 && /[\w$.]/.test(before[start - 1])) return null;
  return { path: m[1].split(/\??\./).filter(Boolean), prefix: m[2] ?? '' };
}

/** Completions for a path: the scope's names, node ids, variable names, then the keys of sample values. */
export function completions(scope: ExpressionScope, path: string[], prefix: string): { label: string; detail: string }[] {
  let options: { label: string; detail: string }[];
  if (path.length === 0) {
    options = [
      { label: scope.runMode, detail: scope.runMode === 'item' ? 'the item this execution handles' : "the node's whole input" },
      { label: 'nodes', detail: 'outputs of earlier nodes, by id' },
      { label: 'variables', detail: "the workflow's variables" },
    ];
  } else if (path.length === 1 && path[0] === 'nodes') {
    options = scope.nodeIds.map((id) => ({ label: id, detail: 'node output' }));
  } else if (path.length === 1 && path[0] === 'variables') {
    options = scope.variables.map((name) => ({ label: name, detail: 'variable' }));
  } else {
    let value: unknown = scope.sample?.values;
    for (const part of path)
      value = isObject(value) ? value[part] : Array.isArray(value) && /^\d+$/.test(part) ? value[Number(part)] : undefined;
    options = isObject(value)
      ? Object.entries(value).map(([key, v]) => ({ label: key, detail: describe(v) }))
      : Array.isArray(value)
        ? [
            { label: 'length', detail: `${value.length}` },
            ...['map', 'filter', 'find', 'some', 'join'].map((m) => ({ label: m, detail: 'array method' })),
          ]
        : typeof value === 'string'
          ? ['length', 'toUpperCase', 'toLowerCase', 'trim', 'includes', 'split'].map((m) => ({ label: m, detail: 'string' }))
          : [];
  }
  const wanted = prefix.toLowerCase();
  return options
    .filter((o) => /^[A-Za-z_$][\w$]*$/.test(o.label) && o.label.toLowerCase().startsWith(wanted) && o.label !== prefix)
    .slice(0, 50);
}

const describe = (value: unknown) =>
  Array.isArray(value)
    ? `array of ${value.length}`
    : value === null
      ? 'null'
      : isObject(value)
        ? 'object'
        : `${typeof value}: ${String(value).slice(0, 30)}`;
