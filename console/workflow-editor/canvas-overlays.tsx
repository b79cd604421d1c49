import { useEffect, useRef, useState } from 'preact/hooks';

export interface MenuItem {
  label: string;
  run: () => void;
  disabled?: boolean;
  danger?: boolean;
}

/**
 * The right-click menu, at the place clicked: a list of actions, arrows move between them,
 * Enter runs one, Escape closes it.
 */
export function ContextMenu({
  items,
  at,
  label,
  onClose,
}: {
  items: MenuItem[];
  at: { x: number; y: number };
  label: string;
  onClose: () => void;
}) {
  const menu = useRef<HTMLUListElement>(null);
  useEffect(() => {
    menu.current?.querySelector<HTMLElement>('[role="menuitem"]:not([aria-disabled="true"])')?.focus();
  }, []);
  const move = (delta: number) => {
    const entries = [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
    const index = entries.indexOf(document.activeElement as HTMLElement);
    entries[(index + delta + entries.length) % entries.length]?.focus();
  };
  return (
    <ul
      ref={menu}
      class="context-menu"
      role="menu"
      aria-label={label}
      data-canvas-overlay
      style={{ left: `${at.x}px`, top: `${at.y}px` }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose();
        else if (e.key === 'ArrowDown') move(1);
        else if (e.key === 'ArrowUp') move(-1);
        else return;
        e.preventDefault();
        e.stopPropagation();
      }}
    >
      {items.map((item) => (
        <li
          key={item.label}
          role="menuitem"
          tabIndex={-1}
          aria-disabled={item.disabled ? 'true' : undefined}
          class={item.danger ? 'danger' : ''}
          onClick={() => {
            if (item.disabled) return;
            onClose();
            item.run();
          }}
          onKeyDown={(e) => {
            if ((e.key === 'Enter' || e.key === ' ') && !item.disabled) {
              e.preventDefault();
              onClose();
              item.run();
            }
          }}
        >
          {item.label}
        </li>
      ))}
    </ul>
  );
}

/** A small form over the canvas: a node's name, or a note's text. Enter (Ctrl+Enter for text) keeps it, Escape drops it. */
export function CanvasField({
  label,
  initial,
  multiline,
  hint,
  onDone,
}: {
  label: string;
  initial: string;
  multiline?: boolean;
  hint?: string;
  onDone: (value: string | null) => void;
}) {
  const [value, setValue] = useState(initial);
  const field = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  useEffect(() => {
    field.current?.focus();
    field.current?.select();
  }, []);
  const keys = (e: KeyboardEvent) => {
    if (e.key === 'Escape') onDone(null);
    else if (e.key === 'Enter' && (!multiline || e.ctrlKey || e.metaKey)) onDone(value);
    else return;
    e.preventDefault();
    e.stopPropagation();
  };
  return (
    <div class="canvas-field" role="dialog" aria-label={label} data-canvas-overlay>
      <label>
        {label}
        {multiline ? (
          <textarea
            ref={field}
            rows={6}
            value={value}
            maxLength={10_000}
            onInput={(e) => setValue(e.currentTarget.value)}
            onKeyDown={keys}
          />
        ) : (
          <input ref={field} value={value} maxLength={200} onInput={(e) => setValue(e.currentTarget.value)} onKeyDown={keys} />
        )}
      </label>
      {hint && <div class="hint">{hint}</div>}
      <div class="actions">
        <button type="button" onClick={() => onDone(value)}>
          Done
        </button>
        <button type="button" class="secondary" onClick={() => onDone(null)}>
          Cancel
        </button>
      </div>
    </div>
  );
}
