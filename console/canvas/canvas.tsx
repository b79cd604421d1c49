import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Position } from '../api-types';
import { labelCulling } from './far-labels';
import { Minimap } from './minimap';
import {
  ARROWS,
  clamp,
  covers,
  cullWindow,
  draggedNote,
  FAR_ZOOM,
  fittedView,
  frameView,
  KEY_STEP,
  MINIMAP,
  nodesInBand,
  revealed,
  transformOf,
  type CullWindow,
  type Gesture,
} from './canvas-view';
import { QuickHandles } from './quick-handles';
import { curve, outputPort, World, type CanvasEdge, type CanvasNode, type CanvasNote, type View } from './world';
import { NODE_HEIGHT, NODE_WIDTH } from './workflow-graph';

export { outputPort, type CanvasEdge, type CanvasNode, type CanvasNote, type View } from './world';
export { ZoomButtons } from './zoom-buttons';

/** What the page can ask of the canvas: where its middle is, fit, zoom, bring a place into view. */
export interface CanvasControl {
  center(): Position;
  fit(): void;
  zoomBy(factor: number): void;
  /** Pans (never zooms) so that a node-sized box at `at` is in view, with a margin. */
  reveal(at: Position): void;
  /** The world place under a point of the page. */
  worldAt(clientX: number, clientY: number): Position;
}

/** What was right-clicked: a node, a note or the background, and where. */
export interface CanvasContext {
  nodeId?: string;
  noteId?: string;
  at: Position;
  client: { x: number; y: number };
}

interface CanvasProps {
  label: string;
  nodes: readonly CanvasNode[];
  edges: readonly CanvasEdge[];
  notes?: readonly CanvasNote[];
  positions: ReadonlyMap<string, Position>;
  selected: ReadonlySet<string>;
  selectedEdge?: number | null;
  selectedNote?: string | null;
  editable: boolean;
  control?: { current: CanvasControl | null };
  onSelect(ids: string[], additive: boolean): void;
  onSelectEdge?(index: number | null): void;
  onSelectNote?(id: string | null): void;
  /** The new places of moved nodes, once per drag or key press. */
  onMove?(moved: Map<string, Position>): void;
  onMoveNote?(id: string, at: Position, size?: { width: number; height: number }): void;
  onEditNote?(id: string): void;
  onConnect?(from: string, output: string, to: string): void;
  /** A connection dropped on empty space, or the `+` of an output clicked: add a node there. */
  onAddAfter?(from: string, output: string, at: Position | null): void;
  onInsertOnEdge?(index: number): void;
  onContextMenu?(context: CanvasContext): void;
  onDelete?(): void;
  /** Shortcuts the page handles (undo, copy, ...): true when it did. */
  onShortcut?(event: KeyboardEvent): boolean;
  /** Opens a node (double click, Enter): the page shows its details. */
  onOpen?(id: string): void;
  /** Renames a node (F2). */
  onRename?(id: string): void;
  /** Drawn above the node the pointer is on (or the one selected): its quick actions. */
  nodeToolbar?(id: string): ComponentChildren;
  /** Drawn over the canvas (a menu, a note being written), in page coordinates of the canvas. */
  children?: ComponentChildren;
}

/**
 * The workflow drawn as notes, nodes and edges: HTML nodes and SVG edges in one layer moved by a
 * CSS transform, so panning and zooming re-render nothing but that transform (and the minimap's
 * frame). Drag the background to pan (Shift+drag selects the nodes in a rectangle), the wheel to
 * zoom, a node to move it, an output port onto a node to connect them (onto empty space to add
 * one). Every action also has a key: Tab to a node, arrows move it, Delete removes it, F2 renames
 * it; on the background arrows pan, + and - zoom, 0 fits.
 */
export function Canvas(props: CanvasProps) {
  const { nodes, edges, positions, selected, editable } = props;
  const notes = props.notes ?? [];
  const viewport = useRef<HTMLDivElement>(null);
  const [view, setView] = useState<View>({ x: 0, y: 0, k: 1 });
  const [drag, setDrag] = useState<{ dx: number; dy: number; ids: ReadonlySet<string> } | null>(null);
  const [noteDrag, setNoteDrag] = useState<{ id: string; dx: number; dy: number; resize: boolean } | null>(null);
  const [wire, setWire] = useState<{ from: Position; to: Position } | null>(null);
  const [band, setBand] = useState<{ a: Position; b: Position } | null>(null);
  const [hovered, setHovered] = useState<string | null>(null);
  const [hoveredEdge, setHoveredEdge] = useState<number | null>(null);
  const gesture = useRef<Gesture | null>(null);
  // A pan in progress moves the view without rendering: the one transform and the minimap's frame
  // are set on the elements, and the state catches up when the gesture ends.
  const live = useRef<View | null>(null);
  const shown = live.current ?? view;
  const viewRef = useRef(shown);
  viewRef.current = shown;
  const worldElement = useRef<HTMLDivElement>(null);
  const minimapFrame = useRef<SVGRectElement>(null);
  const far = shown.k < FAR_ZOOM;
  // What the world draws in full: moved when the view leaves it (a pan in progress asks for a render then).
  const cull = useRef<CullWindow | null>(null);
  const [, redraw] = useState(0);

  const place = (id: string): Position => {
    const p = positions.get(id) ?? { x: 0, y: 0 };
    return drag?.ids.has(id) ? { x: p.x + drag.dx, y: p.y + drag.dy } : p;
  };
  const placeNote = (note: CanvasNote): CanvasNote => (noteDrag?.id === note.id ? draggedNote(note, noteDrag) : note);

  const size = () => ({ width: viewport.current?.clientWidth ?? 800, height: viewport.current?.clientHeight ?? 500 });
  const viewSize = size();
  if (!covers(cull.current, shown, viewSize.width, viewSize.height)) cull.current = cullWindow(shown, viewSize.width, viewSize.height);
  const outOfWindow = (v: View) => {
    const { width, height } = size();
    return !covers(cull.current, v, width, height);
  };
  /** The part of the view nodes are fitted into: beside the minimap when there is room for both. */
  const fitBox = () => {
    const { width, height } = size();
    return width > 600 ? { width: width - MINIMAP.width, height } : { width, height };
  };
  const fit = () => {
    const next = fittedView(positions, notes, fitBox());
    if (next) setView(next);
  };
  const panTo = (next: View) => {
    live.current = next;
    viewRef.current = next;
    if (worldElement.current) worldElement.current.style.transform = transformOf(next);
    if (outOfWindow(next)) redraw((n) => n + 1);
    if (minimapFrame.current) frameView(minimapFrame.current, next, size());
  };
  const zoomAt = (factor: number, px: number, py: number) =>
    setView((v) => {
      const k = clamp(v.k * factor);
      return { k, x: px - ((px - v.x) * k) / v.k, y: py - ((py - v.y) * k) / v.k };
    });
  const toWorld = (clientX: number, clientY: number): Position => {
    const rect = viewport.current!.getBoundingClientRect();
    const v = viewRef.current;
    return { x: (clientX - rect.left - v.x) / v.k, y: (clientY - rect.top - v.y) / v.k };
  };

  const reveal = (at: Position) => {
    const box = fitBox();
    setView((v) => revealed(v, at, box));
  };

  if (props.control) {
    props.control.current = {
      center: () => {
        const { width, height } = fitBox();
        const v = viewRef.current;
        return { x: (width / 2 - v.x) / v.k - NODE_WIDTH / 2, y: (height / 2 - v.y) / v.k - NODE_HEIGHT / 2 };
      },
      fit,
      zoomBy: (factor) => {
        const { width, height } = size();
        zoomAt(factor, width / 2, height / 2);
      },
      reveal,
      worldAt: toWorld,
    };
  }

  // Fitted once the first nodes are known (and the element has its size).
  const fitted = useRef(false);
  useLayoutEffect(() => {
    if (!fitted.current && positions.size) {
      fitted.current = true;
      fit();
    }
  }, [positions.size]);

  // Far out, labels that would cover each other are left out (recomputed when the zoom, the nodes or the window drawn change, not on a pan).
  useLayoutEffect(() => {
    if (worldElement.current) labelCulling(worldElement.current, far ? shown.k : null);
  }, [far ? shown.k : 0, nodes, positions, drag, cull.current]);

  // A listener that may cancel: the page must not scroll while the wheel zooms the canvas.
  useEffect(() => {
    const element = viewport.current!;
    const onWheel = (event: WheelEvent) => {
      event.preventDefault();
      const rect = element.getBoundingClientRect();
      zoomAt(Math.exp(-event.deltaY * 0.0015), event.clientX - rect.left, event.clientY - rect.top);
    };
    element.addEventListener('wheel', onWheel, { passive: false });
    // A larger canvas (a wider window, full screen) may show what the window left out.
    const resized = new ResizeObserver(() => outOfWindow(viewRef.current) && redraw((n) => n + 1));
    resized.observe(element);
    return () => {
      element.removeEventListener('wheel', onWheel);
      resized.disconnect();
    };
  }, []);

  const onPointerDown = (event: PointerEvent) => {
    if (event.button !== 0) return;
    const target = event.target as Element;
    if (target.closest('[data-canvas-overlay]')) return;
    const add = target.closest<HTMLElement>('[data-add-after]');
    const insert = target.closest<SVGElement>('[data-edge-insert]');
    const port = target.closest<HTMLElement>('[data-output-port]');
    const resize = target.closest<HTMLElement>('[data-note-resize]');
    const noteElement = target.closest<HTMLElement>('[data-note-id]');
    const nodeElement = target.closest<HTMLElement>('[data-node-id]');
    const edgeElement = target.closest<SVGElement>('[data-edge-index]');
    if (add && editable) {
      event.preventDefault();
      props.onAddAfter?.(add.dataset.addAfter!, add.dataset.output!, null);
      return;
    }
    if (insert && editable) {
      event.preventDefault();
      props.onInsertOnEdge?.(Number(insert.dataset.edgeInsert));
      return;
    }
    try {
      viewport.current!.setPointerCapture(event.pointerId);
    } catch {
      // A pointer that is already gone (or a synthetic one) cannot be captured: moves still arrive while over the canvas.
    }
    if (port && editable) {
      const from = port.dataset.node!;
      const output = port.dataset.outputPort!;
      const node = nodes.find((n) => n.id === from)!;
      const start = outputPort(place(from), node.outputs.indexOf(output), node.outputs.length);
      gesture.current = { kind: 'connect', from, output, start };
      setWire({ from: start, to: start });
      event.preventDefault();
    } else if (nodeElement) {
      const id = nodeElement.dataset.nodeId!;
      const additive = event.shiftKey || event.ctrlKey || event.metaKey;
      const ids = selected.has(id) && !additive ? [...selected] : additive ? [...new Set([...selected, id])] : [id];
      if (!selected.has(id) || additive) props.onSelect(ids, false);
      if (editable) gesture.current = { kind: 'drag', startX: event.clientX, startY: event.clientY, ids, moved: false };
    } else if (noteElement) {
      const id = noteElement.dataset.noteId!;
      props.onSelectNote?.(id);
      if (editable)
        gesture.current = { kind: 'note', startX: event.clientX, startY: event.clientY, id, resize: Boolean(resize), moved: false };
    } else if (edgeElement) {
      props.onSelectEdge?.(Number(edgeElement.dataset.edgeIndex));
    } else if (event.shiftKey) {
      const start = toWorld(event.clientX, event.clientY);
      gesture.current = { kind: 'band', start, additive: event.ctrlKey || event.metaKey };
      setBand({ a: start, b: start });
    } else {
      gesture.current = { kind: 'pan', startX: event.clientX, startY: event.clientY, view: viewRef.current, moved: false };
    }
  };

  const onPointerMove = (event: PointerEvent) => {
    const g = gesture.current;
    if (!g) {
      // What the pointer is over decides the quick actions drawn: a node's toolbar and +, an edge's +.
      const target = event.target as Element;
      if (target.closest('[data-canvas-overlay], [data-edge-insert], [data-add-after]')) return;
      const node = target.closest<HTMLElement>('[data-node-id]')?.dataset.nodeId ?? null;
      const edge = target.closest<SVGElement>('[data-edge-index]')?.dataset.edgeIndex;
      if (node !== null && node !== hovered) setHovered(node);
      const overEdge = edge === undefined || node !== null ? null : Number(edge);
      if (overEdge !== hoveredEdge) setHoveredEdge(overEdge);
      return;
    }
    if (g.kind === 'pan') {
      const dx = event.clientX - g.startX;
      const dy = event.clientY - g.startY;
      g.moved ||= Math.abs(dx) + Math.abs(dy) > 3;
      panTo({ ...g.view, x: g.view.x + dx, y: g.view.y + dy });
    } else if (g.kind === 'drag' || g.kind === 'note') {
      const k = viewRef.current.k;
      const dx = (event.clientX - g.startX) / k;
      const dy = (event.clientY - g.startY) / k;
      g.moved ||= Math.abs(dx) + Math.abs(dy) > 2;
      if (g.moved && g.kind === 'drag') setDrag({ dx, dy, ids: new Set(g.ids) });
      if (g.moved && g.kind === 'note') setNoteDrag({ id: g.id, dx, dy, resize: g.resize });
    } else if (g.kind === 'band') {
      setBand({ a: g.start, b: toWorld(event.clientX, event.clientY) });
    } else {
      setWire({ from: g.start, to: toWorld(event.clientX, event.clientY) });
    }
  };

  const onPointerUp = (event: PointerEvent) => {
    const g = gesture.current;
    gesture.current = null;
    if (!g) return;
    if (g.kind === 'pan' && live.current) {
      setView(live.current);
      live.current = null;
    }
    if (g.kind === 'pan' && !g.moved) {
      props.onSelect([], false);
      props.onSelectNote?.(null);
    }
    if (g.kind === 'drag' && g.moved && drag) {
      const moved = new Map(g.ids.map((id) => [id, place(id)]));
      setDrag(null);
      props.onMove?.(moved);
    } else if (g.kind === 'drag') {
      setDrag(null);
    }
    if (g.kind === 'note') {
      const note = notes.find((n) => n.id === g.id);
      if (note && g.moved && noteDrag) {
        const next = placeNote(note);
        props.onMoveNote?.(g.id, next.position, g.resize ? { width: Math.round(next.width), height: Math.round(next.height) } : undefined);
      }
      setNoteDrag(null);
    }
    if (g.kind === 'band') {
      const inside = nodesInBand(
        nodes.map((n) => n.id),
        place,
        g.start,
        toWorld(event.clientX, event.clientY),
      );
      setBand(null);
      props.onSelect(g.additive ? [...new Set([...selected, ...inside])] : inside, false);
    }
    if (g.kind === 'connect') {
      setWire(null);
      // The pointer is captured: what is under it is found by position.
      const under = document.elementFromPoint(event.clientX, event.clientY);
      const node = under?.closest<HTMLElement>('[data-node-id]');
      if (node && node.dataset.nodeId !== g.from) props.onConnect?.(g.from, g.output, node.dataset.nodeId!);
      else if (!node && under && viewport.current?.contains(under)) {
        const at = toWorld(event.clientX, event.clientY);
        if (Math.hypot(at.x - g.start.x, at.y - g.start.y) > 30)
          props.onAddAfter?.(g.from, g.output, { x: at.x, y: at.y - NODE_HEIGHT / 2 });
      }
    }
  };

  const moveSelected = (dx: number, dy: number) => {
    if (!editable || !selected.size) return;
    props.onMove?.(new Map([...selected].map((id) => [id, { x: place(id).x + dx, y: place(id).y + dy }])));
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if ((event.target as Element).closest('[data-canvas-overlay]')) return;
    if (props.onShortcut?.(event)) {
      event.preventDefault();
      return;
    }
    const onNode = (event.target as Element).closest('[data-node-id]');
    const step = event.shiftKey ? KEY_STEP * 4 : KEY_STEP;
    if (ARROWS[event.key]) {
      const [dx, dy] = ARROWS[event.key];
      if (onNode && editable) moveSelected(dx * step, dy * step);
      else setView((v) => ({ ...v, x: v.x - dx * step * 4, y: v.y - dy * step * 4 }));
    } else if (onNode && event.key === ' ') {
      // Space selects (Shift+Space adds to the selection), Enter opens.
      const id = (onNode as HTMLElement).dataset.nodeId!;
      props.onSelect(event.shiftKey ? [...new Set([...selected, id])] : [id], false);
    } else if (onNode && event.key === 'Enter') {
      const id = (onNode as HTMLElement).dataset.nodeId!;
      props.onSelect([id], false);
      props.onOpen?.(id);
    } else if (onNode && event.key === 'F2' && editable) {
      props.onRename?.((onNode as HTMLElement).dataset.nodeId!);
    } else if (editable && (event.key === 'Delete' || event.key === 'Backspace') && (selected.size || props.selectedEdge != null)) {
      props.onDelete?.();
      // The focused node is gone: the canvas keeps the focus, so the next key (Ctrl+Z) still reaches it.
      viewport.current?.focus();
    } else if (event.key === 'Escape') {
      props.onSelect([], false);
      props.onSelectEdge?.(null);
    } else if (!onNode && (event.key === '+' || event.key === '=')) {
      props.control?.current?.zoomBy(1.2);
    } else if (!onNode && event.key === '-') {
      props.control?.current?.zoomBy(1 / 1.2);
    } else if (!onNode && event.key === '0') {
      fit();
    } else {
      return;
    }
    event.preventDefault();
  };

  const onContextMenu = (event: MouseEvent) => {
    if (!props.onContextMenu || (event.target as Element).closest('[data-canvas-overlay]')) return;
    event.preventDefault();
    const target = event.target as Element;
    const nodeId = target.closest<HTMLElement>('[data-node-id]')?.dataset.nodeId;
    const noteId = target.closest<HTMLElement>('[data-note-id]')?.dataset.noteId;
    if (nodeId && !selected.has(nodeId)) props.onSelect([nodeId], false);
    const rect = viewport.current!.getBoundingClientRect();
    props.onContextMenu({
      nodeId,
      noteId,
      at: toWorld(event.clientX, event.clientY),
      client: { x: event.clientX - rect.left, y: event.clientY - rect.top },
    });
  };

  const toolbarFor = hovered && positions.has(hovered) ? hovered : selected.size === 1 ? [...selected][0] : null;
  const toolbarAt = toolbarFor && positions.has(toolbarFor) ? place(toolbarFor) : null;
  const quick =
    editable && !far && !drag ? (
      <QuickHandles nodes={nodes} edges={edges} positions={positions} place={place} nodeId={toolbarFor} edgeIndex={hoveredEdge} />
    ) : null;
  const world = {
    nodes,
    edges,
    notes,
    place,
    placeNote,
    selected,
    selectedEdge: props.selectedEdge ?? null,
    selectedNote: props.selectedNote ?? null,
    editable,
    dragKey: drag ? `${drag.dx},${drag.dy}` : noteDrag ? `note:${noteDrag.dx},${noteDrag.dy}` : '',
    positions,
    cull: cull.current,
  };
  return (
    <div class="canvas-frame">
      <div
        ref={viewport}
        class={`canvas${gesture.current?.kind === 'pan' ? ' panning' : ''}${far ? ' far' : ''}`}
        tabIndex={0}
        role="group"
        aria-roledescription="canvas"
        aria-label={props.label}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={onPointerUp}
        onPointerLeave={() => hovered !== null && setHovered(null)}
        onKeyDown={onKeyDown}
        onFocusIn={(event) => {
          // Tab onto a node out of the window (a placeholder): the view follows, and draws it.
          const id = (event.target as HTMLElement).closest?.('.canvas-node.culled')?.getAttribute('data-node-id');
          if (id) reveal(place(id));
        }}
        onContextMenu={onContextMenu}
        onDblClick={(event) => {
          // The pointer was captured by the canvas: what was double-clicked is found by position.
          const target = document.elementFromPoint(event.clientX, event.clientY) ?? (event.target as Element);
          const id = target.closest<HTMLElement>('[data-node-id]')?.dataset.nodeId;
          const note = target.closest<HTMLElement>('[data-note-id]')?.dataset.noteId;
          if (id) props.onOpen?.(id);
          else if (note && editable) props.onEditNote?.(note);
        }}
      >
        <div class="canvas-world" ref={worldElement} style={{ transform: transformOf(shown), '--k': String(shown.k) }}>
          <World {...world} />
          {(wire || band) && (
            <svg class="canvas-edges" aria-hidden="true">
              {wire && <path class="edge edge-wire" d={curve(wire.from, wire.to)} />}
              {band && (
                <rect
                  class="rubber-band"
                  x={Math.min(band.a.x, band.b.x)}
                  y={Math.min(band.a.y, band.b.y)}
                  width={Math.abs(band.b.x - band.a.x)}
                  height={Math.abs(band.b.y - band.a.y)}
                />
              )}
            </svg>
          )}
          {quick}
          {editable && toolbarAt && !far && !drag && props.nodeToolbar && (
            <div class="node-toolbar" data-canvas-overlay style={{ left: `${toolbarAt.x}px`, top: `${toolbarAt.y - 34}px` }}>
              {props.nodeToolbar(toolbarFor!)}
            </div>
          )}
        </div>
        {props.children}
      </div>
      <Minimap
        nodes={nodes}
        positions={positions}
        dragKey={world.dragKey}
        place={place}
        view={shown}
        frameRef={minimapFrame}
        size={size}
        onCenter={(p) => setView((v) => ({ ...v, x: size().width / 2 - p.x * v.k, y: size().height / 2 - p.y * v.k }))}
      />
    </div>
  );
}
