import type { RunSummary } from '../api-types';
import { ZoomButtons, type CanvasControl } from '../canvas/canvas';
import type { EditorActions } from './editor-actions';

interface BarProps {
  canvasEditable: boolean;
  selectedCount: number;
  hasEdgeOrNote: boolean;
  canUndo: boolean;
  canRedo: boolean;
  catalogueOpen: boolean;
  control: { current: CanvasControl | null };
  actions: EditorActions;
  undo: () => void;
  redo: () => void;
  onAdd: () => void;
  recent: RunSummary[];
  shownRunId: string | null;
  onShowRun: (id: string | null) => void;
}

/** The canvas's own actions, above it: add, notes, undo, the clipboard, tidy, zoom, and which run is drawn. */
export function CanvasBar(p: BarProps) {
  const { actions } = p;
  return (
    <div class="toolbar canvas-bar" role="toolbar" aria-label="Canvas actions">
      <button type="button" onClick={p.onAdd} disabled={!p.canvasEditable} aria-expanded={p.catalogueOpen} title="Tab on the canvas: N">
        Add node
      </button>
      <button type="button" class="secondary" onClick={() => actions.addNote(null)} disabled={!p.canvasEditable}>
        Sticky note
      </button>
      <button type="button" class="secondary" onClick={p.undo} disabled={!p.canUndo} title="Ctrl+Z">
        Undo
      </button>
      <button type="button" class="secondary" onClick={p.redo} disabled={!p.canRedo} title="Ctrl+Shift+Z or Ctrl+Y">
        Redo
      </button>
      <button
        type="button"
        class="secondary"
        onClick={() => actions.duplicate()}
        disabled={!p.canvasEditable || !p.selectedCount}
        title="Ctrl+D"
      >
        Duplicate
      </button>
      <button type="button" class="secondary" onClick={() => void actions.copyToClipboard()} disabled={!p.selectedCount} title="Ctrl+C">
        Copy
      </button>
      <button type="button" class="secondary" onClick={() => void actions.pasteFromClipboard()} disabled={!p.canvasEditable} title="Ctrl+V">
        Paste
      </button>
      <button
        type="button"
        class="secondary"
        onClick={actions.remove}
        disabled={!p.canvasEditable || (!p.selectedCount && !p.hasEdgeOrNote)}
        title="Delete"
      >
        Delete
      </button>
      <button type="button" class="secondary" onClick={actions.tidy} disabled={!p.canvasEditable}>
        Tidy up
      </button>
      <ZoomButtons control={p.control} />
      <label class="compact run-picker">
        Show a run
        <select value={p.shownRunId ?? ''} onChange={(e) => p.onShowRun(e.currentTarget.value || null)}>
          <option value="">none</option>
          {p.shownRunId && !p.recent.some((r) => r.id === p.shownRunId) && <option value={p.shownRunId}>{p.shownRunId}</option>}
          {p.recent.map((r) => (
            <option key={r.id} value={r.id}>
              {r.status} · {r.runType}
              {r.trigger === 'node-test' ? ' (node test)' : ''} · {new Date(r.createdAt).toLocaleTimeString()}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}
