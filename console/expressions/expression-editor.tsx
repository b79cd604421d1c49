import { createContext } from 'preact';
import { useContext, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { json } from '../format';
import { isObject } from '../json-schema';
import { isTemplate } from './template';
import type { Preview } from './expression-preview';

type Previewer = (source: string, scope: Record<string, unknown>) => Preview;
/** The preview's parser is most of its weight: loaded with the first expression field, not with the console. */
let previewer: Previewer | null = null;
const loadPreviewer = () => import('./expression-preview').then((m) => (previewer = m.previewExpression));

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

export const ExpressionScopeContext = createContext<ExpressionScope | null>(null);

const KEYWORDS = new Set(['true', 'false', 'null', 'undefined', 'typeof', 'in', 'new', 'void', 'instanceof', 'NaN', 'Infinity']);
const SCOPE_ROOTS = new Set(['input', 'item', 'nodes', 'variables']);
const TOKEN = /(\/\/.*$|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|`(?:[^`\\]|\\.)*`?)|(\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b)|([A-Za-z_$][\w$]*)|(=>|===|!==|==|!=|<=|>=|&&|\|\||\?\?|\?\.|[-+*/%<>!?:=&|^~.,;()[\]{}])/gm;

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
    const kind = string ? (text.startsWith('//') ? 'comment' : 'str') : number ? 'num' : name ? (KEYWORDS.has(text) ? 'kw' : SCOPE_ROOTS.has(text) ? 'root' : 'name') : 'punc';
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
    for (const part of path) value = isObject(value) ? value[part] : Array.isArray(value) && /^\d+$/.test(part) ? value[Number(part)] : undefined;
    options = isObject(value)
      ? Object.entries(value).map(([key, v]) => ({ label: key, detail: describe(v) }))
      : Array.isArray(value)
        ? [{ label: 'length', detail: `${value.length}` }, ...['map', 'filter', 'find', 'some', 'join'].map((m) => ({ label: m, detail: 'array method' }))]
        : typeof value === 'string'
          ? ['length', 'toUpperCase', 'toLowerCase', 'trim', 'includes', 'split'].map((m) => ({ label: m, detail: 'string' }))
          : [];
  }
  const wanted = prefix.toLowerCase();
  return options.filter((o) => /^[A-Za-z_$][\w$]*$/.test(o.label) && o.label.toLowerCase().startsWith(wanted) && o.label !== prefix).slice(0, 50);
}

const describe = (value: unknown) =>
  Array.isArray(value) ? `array of ${value.length}` : value === null ? 'null' : isObject(value) ? 'object' : `${typeof value}: ${String(value).slice(0, 30)}`;

let counter = 0;

interface ExpressionEditorProps {
  label: string;
  value: string;
  placeholder?: string;
  onChange(value: string): void;
}

/**
 * An expression field: the text highlighted as JavaScript (a transparent textarea over the
 * highlighted copy), completion of the names in scope and of the keys found in the latest run's
 * data (Ctrl+Space, or on typing `.`), and a live preview of the value against that data.
 */
export function ExpressionEditor({ label, value, placeholder, onChange }: ExpressionEditorProps) {
  const scope = useContext(ExpressionScopeContext);
  const area = useRef<HTMLTextAreaElement>(null);
  const layer = useRef<HTMLPreElement>(null);
  const [open, setOpen] = useState<{ items: { label: string; detail: string }[]; prefix: string; active: number } | null>(null);
  const id = useMemo(() => `expr-${++counter}`, []);

  const suggest = (text: string, caret: number, force: boolean) => {
    if (!scope) return setOpen(null);
    const at = pathAtCaret(text.slice(0, caret));
    const items = at ? completions(scope, at.path, at.prefix) : [];
    if (items.length && (force || at!.prefix || at!.path.length)) setOpen({ items, prefix: at!.prefix, active: 0 });
    else setOpen(null);
  };

  const accept = (label: string) => {
    const element = area.current!;
    const caret = element.selectionStart;
    const before = value.slice(0, caret - (open?.prefix.length ?? 0));
    const next = before + label + value.slice(caret);
    onChange(next);
    setOpen(null);
    requestAnimationFrame(() => {
      element.focus();
      element.selectionStart = element.selectionEnd = before.length + label.length;
    });
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === ' ' && event.ctrlKey) {
      event.preventDefault();
      suggest(value, area.current!.selectionStart, true);
      return;
    }
    if (!open) return;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const delta = event.key === 'ArrowDown' ? 1 : -1;
      setOpen({ ...open, active: (open.active + delta + open.items.length) % open.items.length });
    } else if (event.key === 'Enter' || event.key === 'Tab') {
      event.preventDefault();
      accept(open.items[open.active].label);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      setOpen(null);
    }
  };

  const [ready, setReady] = useState(previewer !== null);
  useEffect(() => {
    if (!ready) void loadPreviewer().then(() => setReady(true));
  }, []);
  const preview = useMemo(() => (ready && previewer && scope?.sample && value.trim() ? previewer(value, scope.sample.values) : null), [ready, value, scope?.sample]);
  const rows = Math.min(8, Math.max(2, value.split('\n').length));

  return (
    <div class="expression">
      <div class="expression-box">
        <pre class="expression-layer" ref={layer} aria-hidden="true">
          {highlight(value).map((t, i) => (
            <span key={i} class={`tok-${t.kind}`}>
              {t.text}
            </span>
          ))}
          {'\n'}
        </pre>
        <textarea
          ref={area}
          class="expression-input code"
          aria-label={label}
          aria-autocomplete="list"
          aria-controls={open ? `${id}-list` : undefined}
          aria-activedescendant={open ? `${id}-${open.active}` : undefined}
          spellcheck={false}
          rows={rows}
          value={value}
          placeholder={placeholder}
          onInput={(e) => {
            const element = e.currentTarget;
            onChange(element.value);
            suggest(element.value, element.selectionStart, false);
          }}
          onKeyDown={onKeyDown}
          onBlur={() => setTimeout(() => setOpen(null), 150)}
          onScroll={(e) => {
            if (layer.current) layer.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
      {open && (
        <ul class="completions" role="listbox" id={`${id}-list`} aria-label={`Completions for ${label}`}>
          {open.items.map((item, i) => (
            <li
              key={item.label}
              id={`${id}-${i}`}
              role="option"
              aria-selected={i === open.active}
              class={i === open.active ? 'active' : ''}
              onMouseDown={(e) => {
                e.preventDefault();
                accept(item.label);
              }}
            >
              <code>{item.label}</code> <span class="muted small">{item.detail}</span>
            </li>
          ))}
        </ul>
      )}
      <div class="expression-preview" aria-live="polite" aria-label={`Preview of ${label}`}>
        {!scope?.sample ? (
          <span class="muted small">No run yet: run the workflow once to preview expressions with its data (Ctrl+Space completes names).</span>
        ) : preview === null ? (
          <span class="muted small">Preview against run {scope.sample.runId} (Ctrl+Space completes names).</span>
        ) : preview.ok ? (
          <>
            <span class="muted small">Preview against run {scope.sample.runId}:</span>
            <code class="preview-value">{preview.value === undefined ? 'undefined' : json(preview.value)}</code>
          </>
        ) : (
          <span class="warning-text">Preview: {preview.reason}</span>
        )}
      </div>
    </div>
  );
}
