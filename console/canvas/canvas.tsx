import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Position } from '../api-types';
import { Minimap } from './minimap';
import { curve, outputPort, World, type CanvasEdge, type CanvasNode, type View } from './world';
import { NODE_HEIGHT, NODE_WIDTH } from './workflow-graph';

export { outputPort, type CanvasEdge, type CanvasNode, type View } from './world';

/** What the page can ask of the canvas: where its middle is (new nodes go there), fit, zoom. */
export interface CanvasControl {
  center(): Position;
  fit(): void;
  zoomBy(factor: number): void;
}

interface CanvasProps {
  label: string;
  nodes: readonly CanvasNode[];
  edges: readonly CanvasEdge[];
  positions: ReadonlyMap<string, Position>;
  selected: ReadonlySet<string>;
  selectedEdge?: number | null;
  editable: boolean;
  control?: { current: CanvasControl | null };
  onSelect(ids: string[], additive: boolean): void;
  onSelectEdge?(index: number | null): void;
  /** The new places of moved nodes, once per drag or key press. */
  onMove?(moved: Map<string, Position>): void;
  onConnect?(from: string, output: string, to: string): void;
  onDelete?(): void;
  /** Shortcuts the page handles (undo, copy, ...): true when it did. */
  onShortcut?(event: KeyboardEvent): boolean;
  /** Opens a node (double click, Enter): the page shows its details. */
  onOpen?(id: string): void;
}

const MIN_ZOOM = 0.1;
/**
 * Below this zoom a node's text is a few pixels high: nodes are drawn as boxes (their subtitle and
 * ports left out, the title kept for assistive technology), which halves what a frame of a pan
 * over 200 nodes costs chromium (test/bench/canvas-pan.bench.ts).
 */
const FAR_ZOOM = 0.35;
const MAX_ZOOM = 2;
const KEY_STEP = 10;
const transformOf = (v: View) => `translate(${v.x}px, ${v.y}px) scale(${v.k})`;
const clamp = (k: number) => Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k));

type Gesture =
  | { kind: 'pan'; startX: number; startY: number; view: View; moved: boolean }
  | { kind: 'drag'; startX: number; startY: number; ids: string[]; moved: boolean }
  | { kind: 'connect'; from: string; output: string; start: Position };

/**
 * The workflow drawn as nodes and edges: HTML nodes and SVG edges in one layer moved by a CSS
 * transform, so panning and zooming re-render nothing but that transform (and the minimap's
 * frame). Drag the background to pan, the wheel to zoom, a node to move it, an output port onto
 * a node to connect them. Every action also has a key: Tab to a node, arrows move it, Delete
 * removes it; on the background arrows pan, + and - zoom, 0 fits.
 */
export function Canvas(props: CanvasProps) {
  const { nodes, edges, positions, selected, editable } = props;
  const viewport = useRef<HTMLDivElement>(null);
  const [view, setView] = useState<View>({ x: 0, y: 0, k: 1 });
  const [drag, setDrag] = useState<{ dx: number; dy: number; ids: ReadonlySet<string> } | null>(null);
  const [wire, setWire] = useState<{ from: Position; to: Position } | null>(null);
  const gesture = useRef<Gesture | null>(null);
  // A pan in progress moves the view without rendering: the one transform and the minimap's frame
  // are set on the elements, and the state catches up when the gesture ends.
  const live = useRef<View | null>(null);
  const shown = live.current ?? view;
  const viewRef = useRef(shown);
  viewRef.current = shown;
  const worldElement = useRef<HTMLDivElement>(null);
  const minimapFrame = useRef<SVGRectElement>(null);

  const place = (id: string): Position => {
    const p = positions.get(id) ?? { x: 0, y: 0 };
    return drag?.ids.has(id) ? { x: p.x + drag.dx, y: p.y + drag.dy } : p;
  };

  const size = () => ({ width: viewport.current?.clientWidth ?? 800, height: viewport.current?.clientHeight ?? 500 });
  const fit = () => {
    if (!positions.size) return;
    const all = [...positions.values()];
    const minX = Math.min(...all.map((p) => p.x)) - 40;
    const minY = Math.min(...all.map((p) => p.y)) - 40;
    const maxX = Math.max(...all.map((p) => p.x + NODE_WIDTH)) + 40;
    const maxY = Math.max(...all.map((p) => p.y + NODE_HEIGHT)) + 40;
    const { width, height } = size();
    const k = clamp(Math.min(width / (maxX - minX), height / (maxY - minY), 1));
    setView({ k, x: (width - (maxX - minX) * k) / 2 - minX * k, y: (height - (maxY - minY) * k) / 2 - minY * k });
  };
  const panTo = (next: View) => {
    live.current = next;
    viewRef.current = next;
    if (worldElement.current) worldElement.current.style.transform = transformOf(next);
    const frame = minimapFrame.current;
    if (frame) {
      const { width, height } = size();
      frame.setAttribute('x', String(-next.x / next.k));
      frame.setAttribute('y', String(-next.y / next.k));
      frame.setAttribute('width', String(width / next.k));
      frame.setAttribute('height', String(height / next.k));
    }
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

  if (props.control) {
    props.control.current = {
      center: () => {
        const { width, height } = size();
        const v = viewRef.current;
        return { x: (width / 2 - v.x) / v.k - NODE_WIDTH / 2, y: (height / 2 - v.y) / v.k - NODE_HEIGHT / 2 };
      },
      fit,
      zoomBy: (factor) => {
        const { width, height } = size();
        zoomAt(factor, width / 2, height / 2);
      },
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

  // A listener that may cancel: the page must not scroll while the wheel zooms the canvas.
  useEffect(() => {
    const element = viewport.current!;
    const onWheel = (event: WheelEvent) => {
      event.preventDefault();
      const rect = element.getBoundingClientRect();
      zoomAt(Math.exp(-event.deltaY * 0.0015), event.clientX - rect.left, event.clientY - rect.top);
    };
    element.addEventListener('wheel', onWheel, { passive: false });
    return () => element.removeEventListener('wheel', onWheel);
  }, []);

  const onPointerDown = (event: PointerEvent) => {
    if (event.button !== 0) return;
    const target = event.target as Element;
    const port = target.closest<HTMLElement>('[data-output-port]');
    const nodeElement = target.closest<HTMLElement>('[data-node-id]');
    const edgeElement = target.closest<SVGElement>('[data-edge-index]');
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
    } else if (edgeElement) {
      props.onSelectEdge?.(Number(edgeElement.dataset.edgeIndex));
    } else {
      gesture.current = { kind: 'pan', startX: event.clientX, startY: event.clientY, view: viewRef.current, moved: false };
    }
  };

  const onPointerMove = (event: PointerEvent) => {
    const g = gesture.current;
    if (!g) return;
    if (g.kind === 'pan') {
      const dx = event.clientX - g.startX;
      const dy = event.clientY - g.startY;
      g.moved ||= Math.abs(dx) + Math.abs(dy) > 3;
      panTo({ ...g.view, x: g.view.x + dx, y: g.view.y + dy });
    } else if (g.kind === 'drag') {
      const k = viewRef.current.k;
      const dx = (event.clientX - g.startX) / k;
      const dy = (event.clientY - g.startY) / k;
      g.moved ||= Math.abs(dx) + Math.abs(dy) > 2;
      if (g.moved) setDrag({ dx, dy, ids: new Set(g.ids) });
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
    if (g.kind === 'pan' && !g.moved) props.onSelect([], false);
    if (g.kind === 'drag' && g.moved && drag) {
      const moved = new Map(g.ids.map((id) => [id, place(id)]));
      setDrag(null);
      props.onMove?.(moved);
    } else if (g.kind === 'drag') {
      setDrag(null);
    }
    if (g.kind === 'connect') {
      setWire(null);
      // The pointer is captured: what is under it is found by position.
      const under = document.elementFromPoint(event.clientX, event.clientY)?.closest<HTMLElement>('[data-node-id]');
      if (under && under.dataset.nodeId !== g.from) props.onConnect?.(g.from, g.output, under.dataset.nodeId!);
    }
  };

  const moveSelected = (dx: number, dy: number) => {
    if (!editable || !selected.size) return;
    props.onMove?.(new Map([...selected].map((id) => [id, { x: place(id).x + dx, y: place(id).y + dy }])));
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (props.onShortcut?.(event)) {
      event.preventDefault();
      return;
    }
    const onNode = (event.target as Element).closest('[data-node-id]');
    const step = event.shiftKey ? KEY_STEP * 4 : KEY_STEP;
    const arrows: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    if (arrows[event.key]) {
      const [dx, dy] = arrows[event.key];
      if (onNode && editable) moveSelected(dx * step, dy * step);
      else setView((v) => ({ ...v, x: v.x - dx * step * 4, y: v.y - dy * step * 4 }));
    } else if (onNode && (event.key === 'Enter' || event.key === ' ')) {
      const id = (onNode as HTMLElement).dataset.nodeId!;
      props.onSelect([id], event.shiftKey);
      props.onOpen?.(id);
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

  const world = {
    nodes,
    edges,
    place,
    selected,
    selectedEdge: props.selectedEdge ?? null,
    editable,
    dragKey: drag ? `${drag.dx},${drag.dy}` : '',
    positions,
  };
  return (
    <div class="canvas-frame">
      <div
        ref={viewport}
        class={`canvas${gesture.current?.kind === 'pan' ? ' panning' : ''}${shown.k < FAR_ZOOM ? ' far' : ''}`}
        tabIndex={0}
        role="group"
        aria-roledescription="canvas"
        aria-label={props.label}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={onPointerUp}
        onKeyDown={onKeyDown}
        onDblClick={(event) => {
          const id = (event.target as Element).closest<HTMLElement>('[data-node-id]')?.dataset.nodeId;
          if (id) props.onOpen?.(id);
        }}
      >
        <div class="canvas-world" ref={worldElement} style={{ transform: transformOf(shown) }}>
          <World {...world} />
          {wire && (
            <svg class="canvas-edges" aria-hidden="true">
              <path class="edge edge-wire" d={curve(wire.from, wire.to)} />
            </svg>
          )}
        </div>
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
      <div class="canvas-zoom">
        <button type="button" onClick={() => props.control?.current?.zoomBy(1.2)} aria-label="Zoom in" title="Zoom in (+)">
          +
        </button>
        <button type="button" onClick={() => props.control?.current?.zoomBy(1 / 1.2)} aria-label="Zoom out" title="Zoom out (-)">
          −
        </button>
        <button type="button" onClick={fit} aria-label="Fit the workflow in view" title="Fit (0)">
          Fit
        </button>
      </div>
    </div>
  );
}
