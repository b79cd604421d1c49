import type { Definition, NodeTest } from '../api-types';
import type { CanvasContext } from '../canvas/canvas';
import { outputsOf } from '../canvas/workflow-graph';
import type { MenuItem } from './canvas-overlays';
import type { AddTarget, EditorActions, Selection } from './editor-actions';

interface MenuContext {
  definition: Definition;
  actions: EditorActions;
  selected: { current: Selection };
  canvasEditable: boolean;
  openCatalogue: (target: AddTarget) => void;
  setRenaming: (id: string) => void;
  setWritingNote: (id: string) => void;
  setNodeView: (id: string) => void;
  test: NodeTester;
}

/** Starts node tests: `from(id)` is the run whose data a test of `id` starts from when nothing is pinned on it. */
export interface NodeTester {
  start: (body: NodeTest) => void;
  busy: boolean;
  from: (id: string) => string | null;
}

/** A node test of `id` on what it would get: its pinned data, else its input in the latest run that reached it (the server says when there is none). */
function testBody(definition: Definition, id: string, test: NodeTester): NodeTest {
  const from = test.from(id);
  return definition.pinnedData?.[id] !== undefined || !from
    ? { nodeId: id, andAfter: false }
    : { nodeId: id, andAfter: false, fromRunId: from };
}

/** The right-click menu's entries: for a node, for a note, or for the background at the place clicked. */
export function menuFor(context: CanvasContext, c: MenuContext): MenuItem[] {
  const { definition, actions } = c;
  const off = !c.canvasEditable;
  if (context.nodeId) {
    const node = definition.nodes.find((n) => n.id === context.nodeId);
    if (!node) return [];
    const ids = c.selected.current.nodes.has(node.id) ? c.selected.current.nodes : new Set([node.id]);
    return [
      { label: 'Open', run: () => c.setNodeView(node.id) },
      { label: 'Rename', run: () => c.setRenaming(node.id), disabled: off },
      { label: 'Test this step', run: () => c.test.start(testBody(definition, node.id, c.test)), disabled: c.test.busy },
      { label: node.disabled ? 'Enable' : 'Disable', run: () => actions.setDisabled(ids, !node.disabled), disabled: off },
      {
        label: 'Add a node after',
        run: () => c.openCatalogue({ kind: 'after', from: node.id, output: outputsOf(node, definition.edges)[0], at: null }),
        disabled: off,
      },
      { label: 'Duplicate', run: () => actions.duplicate(ids), disabled: off },
      { label: 'Copy', run: () => void actions.copyToClipboard() },
      { label: 'Delete', run: actions.remove, disabled: off, danger: true },
    ];
  }
  if (context.noteId) {
    const id = context.noteId;
    return [
      { label: 'Edit note', run: () => c.setWritingNote(id), disabled: off },
      { label: 'Delete note', run: actions.remove, disabled: off, danger: true },
    ];
  }
  return [
    { label: 'Add a node here', run: () => c.openCatalogue({ kind: 'free', at: context.at }), disabled: off },
    {
      label: 'Add a sticky note here',
      run: () => {
        const id = actions.addNote(context.at);
        if (id) c.setWritingNote(id);
      },
      disabled: off,
    },
    { label: 'Paste', run: () => void actions.pasteFromClipboard(context.at), disabled: off },
    { label: 'Select all', run: () => actions.selectAll() },
    { label: 'Tidy up', run: actions.tidy, disabled: off },
  ];
}

interface ToolbarProps {
  id: string;
  definition: Definition | null;
  actions: EditorActions;
  test: NodeTester;
  onOpen: (id: string) => void;
  onRename: (id: string) => void;
}

/** Above the node under the pointer: test it, turn it off or on, duplicate, delete. */
export function NodeToolbar({ id, definition, actions, test, onOpen, onRename }: ToolbarProps) {
  const node = definition?.nodes.find((n) => n.id === id);
  if (!node || !definition) return null;
  const only = new Set([id]);
  const button = (label: string, glyph: string, run: () => void, disabled = false) => (
    <button type="button" class="icon-button" aria-label={`${label} ${id}`} title={label} disabled={disabled} onClick={run}>
      {glyph}
    </button>
  );
  return (
    <>
      {button('Test this step', '▶', () => test.start(testBody(definition, id, test)), test.busy)}
      {button(node.disabled ? 'Enable' : 'Disable', '⊘', () => actions.setDisabled(only, !node.disabled))}
      {button('Rename', '✎', () => onRename(id))}
      {button('Open', '⤢', () => onOpen(id))}
      {button('Duplicate', '❏', () => actions.duplicate(only))}
      {button('Delete', '✕', () => {
        actions.selectOnly(id);
        actions.remove();
      })}
    </>
  );
}
