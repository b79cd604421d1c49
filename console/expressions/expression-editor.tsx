import { createContext } from 'preact';
import { useContext, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { json } from '../format';
import { completions, highlight, pathAtCaret, type ExpressionScope } from './expression-help';
import type { Preview } from './expression-preview';

type Previewer = (source: string, scope: Record<string, unknown>) => Preview;
/** The preview's parser is most of its weight: loaded with the first expression field, not with the console. */
let previewer: Previewer | null = null;
const loadPreviewer = () => import('./expression-preview').then((m) => (previewer = m.previewExpression));

export const ExpressionScopeContext = createContext<ExpressionScope | null>(null);

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
  const preview = useMemo(
    () => (ready && previewer && scope?.sample && value.trim() ? previewer(value, scope.sample.values) : null),
    [ready, value, scope?.sample],
  );
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
          <span class="muted small">
            No run yet: run the workflow once to preview expressions with its data (Ctrl+Space completes names).
          </span>
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
