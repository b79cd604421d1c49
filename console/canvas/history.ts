import { useRef, useState } from 'preact/hooks';

const LIMIT = 200;
/** Keystrokes in the same field closer than this make one step of undo, not one per character. */
const COALESCE_MS = 800;

export interface History {
  value: string;
  canUndo: boolean;
  canRedo: boolean;
  /** A new state; changes with the same `group` in quick succession (typing) are one step. */
  set(next: string, group?: string): void;
  undo(): void;
  redo(): void;
}

/** Undo and redo over the definition's text: every editor (canvas, form, JSON) writes through it. */
export function useHistory(initial: string): History {
  const [state, setState] = useState({ past: [] as string[], present: initial, future: [] as string[] });
  const last = useRef<{ group?: string; at: number }>({ at: 0 });
  return {
    value: state.present,
    canUndo: state.past.length > 0,
    canRedo: state.future.length > 0,
    set(next, group) {
      const now = Date.now();
      const merge = group !== undefined && last.current.group === group && now - last.current.at < COALESCE_MS;
      last.current = { group, at: now };
      setState((s) => {
        if (next === s.present) return s;
        if (merge && s.past.length) return { ...s, present: next, future: [] };
        return { past: [...s.past, s.present].slice(-LIMIT), present: next, future: [] };
      });
    },
    undo() {
      last.current = { at: 0 };
      setState((s) =>
        s.past.length ? { past: s.past.slice(0, -1), present: s.past[s.past.length - 1], future: [s.present, ...s.future] } : s,
      );
    },
    redo() {
      last.current = { at: 0 };
      setState((s) => (s.future.length ? { past: [...s.past, s.present], present: s.future[0], future: s.future.slice(1) } : s));
    },
  };
}
