import { useEffect } from 'preact/hooks';
import type { Definition, NodeType, Position } from '../api-types';
import type { CanvasControl } from '../canvas/canvas';
import {
  addNote,
  clearOffset,
  clearSpot,
  insertOnEdge,
  placeAfter,
  removeNote,
  updateNote,
  withDisabled,
  withName,
} from '../canvas/graph-edits';
import {
  addNode,
  connect,
  fragmentOf,
  layoutAll,
  outputsOf,
  parseFragment,
  paste,
  removeEdge,
  removeNodes,
  withPositions,
} from '../canvas/workflow-graph';

/** Where the catalogue's pick goes: after an output of a node (at a place, or beside it), into an edge, or free. */
export type AddTarget =
  | { kind: 'after'; from: string; output: string; at: Position | null }
  | { kind: 'edge'; index: number }
  | { kind: 'free'; at: Position | null };

/** The selection as the editor keeps it; read through a ref so a key pressed in the same frame as a click sees it. */
export interface Selection {
  nodes: ReadonlySet<string>;
  edge: number | null;
  note: string | null;
}

interface ActionContext {
  definition: Definition | null;
  positions: ReadonlyMap<string, Position>;
  types: readonly NodeType[];
  selection: { current: Selection };
  control: { current: CanvasControl | null };
  write: (next: Definition, group?: string) => void;
  select: (ids: string[]) => void;
  selectNote: (id: string | null) => void;
  say: (note: string) => void;
}

/** What Ctrl+C put on the clipboard, for the Paste button when the browser will not read the clipboard. */
let copied: string | null = null;

/**
 * Every change the canvas makes to the definition, each one step of undo. New nodes land clear of
 * the others and the view follows them.
 */
export function editorActions(c: ActionContext) {
  const { definition, positions } = c;
  /** The layout the user sees, saved as positions the first time anything moves. */
  const freeze = (def: Definition, moved: Map<string, Position> = new Map()) => withPositions(def, new Map([...positions, ...moved]));
  const selected = () => c.selection.current.nodes;
  const landed = (ids: string[], at: Position | undefined) => {
    c.select(ids);
    if (at) requestAnimationFrame(() => c.control.current?.reveal(at));
  };

  const actions = {
    freeze,
    /** Adds a node of `type` where `target` says; a trigger is never connected after anything. */
    add(type: NodeType, target: AddTarget) {
      if (!definition) return;
      if (target.kind === 'edge') {
        const result = insertOnEdge(freeze(definition), target.index, type, positions);
        c.write(result.definition);
        landed([result.id], result.at);
        return;
      }
      const after = target.kind === 'after' && !type.trigger ? { from: target.from, output: target.output } : undefined;
      const wanted =
        target.kind === 'after'
          ? (target.at ?? placeAfter(definition, positions, target.from, target.output))
          : (target.at ?? c.control.current?.center() ?? { x: 0, y: 0 });
      const at = clearSpot(wanted, positions.values());
      const result = addNode(freeze(definition), type, at, after);
      c.write(result.definition);
      landed([result.id], at);
    },
    /** The catalogue's target for the toolbar's Add node: after the selected node's first output, else in the middle of the view. */
    defaultTarget(): AddTarget {
      const only = selected().size === 1 ? [...selected()][0] : null;
      const node = only ? definition?.nodes.find((n) => n.id === only) : undefined;
      return node ? { kind: 'after', from: node.id, output: outputsOf(node, definition?.edges)[0], at: null } : { kind: 'free', at: null };
    },
    selectAll() {
      c.select(definition?.nodes.map((n) => n.id) ?? []);
    },
    selectOnly(id: string) {
      c.select([id]);
    },
    remove() {
      if (!definition) return;
      const { edge, note } = c.selection.current;
      if (edge !== null) c.write(removeEdge(definition, edge));
      else if (note !== null) c.write(removeNote(definition, note));
      else if (selected().size) c.write(removeNodes(definition, selected()));
      c.select([]);
      c.selectNote(null);
    },
    duplicate(ids: ReadonlySet<string> = selected()) {
      if (!definition || !ids.size) return;
      const fragment = fragmentOf(definition, ids, positions);
      const top = fragment.nodes.reduce(
        (p, n) => (n.position && n.position.y < p.y ? n.position : p),
        fragment.nodes[0].position ?? { x: 0, y: 0 },
      );
      const left = Math.min(...fragment.nodes.map((n) => n.position?.x ?? 0));
      const offset = clearOffset(fragment, { x: left + 40, y: top.y + 40 }, positions);
      const result = paste(freeze(definition), fragment, offset, c.types);
      c.write(result.definition);
      landed(result.ids, result.definition.nodes.find((n) => n.id === result.ids[0])?.position);
    },
    copyText(): string | null {
      const ids = selected();
      if (!definition || !ids.size) return null;
      copied = JSON.stringify(fragmentOf(definition, ids, positions), null, 2);
      return copied;
    },
    pasteText(clip: string, at?: Position) {
      const fragment = parseFragment(clip);
      if (!definition || !fragment) {
        c.say('The clipboard holds no nodes: copy nodes of a workflow first (their JSON).');
        return;
      }
      // The copy lands in view (or where the menu was opened), clear of the nodes already there.
      const offset = clearOffset(fragment, at ?? c.control.current?.center() ?? { x: 0, y: 0 }, positions);
      const result = paste(freeze(definition), fragment, offset, c.types);
      c.write(result.definition);
      landed(result.ids, result.definition.nodes.find((n) => n.id === result.ids[0])?.position);
      c.say(result.ids.length ? `Pasted ${result.ids.length} node(s).` : 'Nothing pasted: the workflow already has its trigger.');
    },
    async pasteFromClipboard(at?: Position) {
      let clip = copied;
      try {
        clip = (await navigator.clipboard.readText()) || copied;
      } catch {
        // The browser may refuse to read the clipboard without a gesture it trusts: use our own copy.
      }
      if (clip) actions.pasteText(clip, at);
      else c.say('Nothing to paste yet: copy nodes first.');
    },
    async copyToClipboard() {
      const clip = actions.copyText();
      if (!clip) return;
      try {
        await navigator.clipboard.writeText(clip);
      } catch {
        // Kept in `copied` for this tab's Paste.
      }
      c.say(`Copied ${selected().size} node(s) as JSON.`);
    },
    tidy() {
      if (definition) c.write(withPositions(definition, layoutAll(definition)));
      requestAnimationFrame(() => c.control.current?.fit());
    },
    connect(from: string, output: string, to: string) {
      if (!definition) return;
      const next = connect(freeze(definition), from, output, to, c.types);
      if (typeof next === 'string') c.say(next);
      else {
        c.write(next);
        c.say(`Connected ${from}${output === 'main' ? '' : ` (${output})`} to ${to}.`);
      }
    },
    move(moved: Map<string, Position>) {
      if (definition) c.write(freeze(definition, moved));
    },
    setDisabled(ids: ReadonlySet<string>, disabled: boolean) {
      if (!definition || !ids.size) return;
      c.write(withDisabled(definition, ids, disabled));
      c.say(`${disabled ? 'Disabled' : 'Enabled'} ${[...ids].join(', ')}${disabled ? ': it passes its input on without running' : ''}.`);
    },
    rename(id: string, name: string) {
      if (definition) c.write(withName(definition, id, name));
    },
    addNote(at: Position | null) {
      if (!definition) return;
      const place = clearSpot(at ?? c.control.current?.center() ?? { x: 0, y: 0 }, positions.values());
      const result = addNote(freeze(definition), place);
      c.write(result.definition);
      c.selectNote(result.id);
      return result.id;
    },
    updateNote(id: string, change: Parameters<typeof updateNote>[2], group?: string) {
      if (definition) c.write(updateNote(definition, id, change), group);
    },
  };
  return actions;
}

export type EditorActions = ReturnType<typeof editorActions>;

const TEXT_FIELD = 'input, textarea, select, [contenteditable="true"]';

/**
 * Ctrl+C / Ctrl+V on the canvas copy and paste nodes as JSON (the system clipboard: any workflow,
 * in any tab, takes them); in a text field, or with text selected, they are the browser's own.
 */
export function useCanvasClipboard(
  area: { current: HTMLElement | null },
  actions: EditorActions,
  selectedCount: () => number,
  say: (note: string) => void,
): void {
  useEffect(() => {
    const onCanvas = () => {
      const active = document.activeElement;
      if (!active || !area.current?.contains(active) || active.closest(TEXT_FIELD)) return false;
      return !String(window.getSelection() ?? '');
    };
    const onCopy = (event: ClipboardEvent) => {
      if (!onCanvas()) return;
      const clip = actions.copyText();
      if (clip && event.clipboardData) {
        event.clipboardData.setData('text/plain', clip);
        event.preventDefault();
        say(`Copied ${selectedCount()} node(s) as JSON.`);
      }
    };
    const onPaste = (event: ClipboardEvent) => {
      if (!onCanvas()) return;
      const clip = event.clipboardData?.getData('text/plain');
      if (clip) {
        event.preventDefault();
        actions.pasteText(clip);
      }
    };
    document.addEventListener('copy', onCopy);
    document.addEventListener('paste', onPaste);
    return () => {
      document.removeEventListener('copy', onCopy);
      document.removeEventListener('paste', onPaste);
    };
  });
}
