import { Component, type ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Position } from '../api-types';
import { NODE_HEIGHT, NODE_WIDTH } from './workflow-graph';

export interface CanvasNode {
  id: string;
  title: string;
  subtitle: string;
  outputs: string[];
  trigger: boolean;
  /** A run's step status (succeeded, failed, skipped, waiting, reused, ...), drawn as the node's colour. */
  status?: string;
  /** Problems the server found (red) or the console's check suspects (amber). */
  errors?: number;
  warnings?: number;
  /** Data is pinned on the node in the draft: a node test takes it as the node's input. */
  pinned?: boolean;
}

export interface CanvasEdge {
  index: number;
  from: string;
  output: string;
  to: string;
  /** Drawn on the edge: an item count in a run. */
  label?: string;
  /** `skipped` draws the edge grey and dashed: nothing went along it. */
  status?: 'skipped' | 'live';
  invalid?: boolean;
}

export interface View {
  x: number;
  y: number;
  k: number;
}

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

/** Where an output port sits on its node, in canvas units. */
export function outputPort(position: Position, index: number, count: number): Position {
  return { x: position.x + NODE_WIDTH, y: position.y + (NODE_HEIGHT * (index + 1)) / (count + 1) };
}
const inputPort = (position: Position): Position => ({ x: position.x, y: position.y + NODE_HEIGHT / 2 });
const curve = (a: Position, b: Position) => {
  const bend = Math.max(40, Math.abs(b.x - a.x) / 2);
  return `M${a.x},${a.y} C${a.x + bend},${a.y} ${b.x - bend},${b.y} ${b.x},${b.y}`;
};

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

  const world = { nodes, edges, place, selected, selectedEdge: props.selectedEdge ?? null, editable, dragKey: drag ? `${drag.dx},${drag.dy}` : '', positions };
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
      <Minimap nodes={nodes} positions={positions} dragKey={world.dragKey} place={place} view={shown} frameRef={minimapFrame} size={size} onCenter={(p) => setView((v) => ({ ...v, x: size().width / 2 - p.x * v.k, y: size().height / 2 - p.y * v.k }))} />
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

interface WorldProps {
  nodes: readonly CanvasNode[];
  edges: readonly CanvasEdge[];
  positions: ReadonlyMap<string, Position>;
  place: (id: string) => Position;
  selected: ReadonlySet<string>;
  selectedEdge: number | null;
  editable: boolean;
  dragKey: string;
}

/**
 * The nodes and edges, re-rendered only when they change, not when the view moves: 200 nodes
 * then pan at the cost of one transform.
 */
class World extends Component<WorldProps> {
  shouldComponentUpdate(next: WorldProps): boolean {
    const p = this.props;
    return (
      next.nodes !== p.nodes ||
      next.edges !== p.edges ||
      next.positions !== p.positions ||
      next.selected !== p.selected ||
      next.selectedEdge !== p.selectedEdge ||
      next.dragKey !== p.dragKey ||
      next.editable !== p.editable
    );
  }

  render({ nodes, edges, place, selected, selectedEdge, editable }: WorldProps) {
    const byId = new Map(nodes.map((n) => [n.id, n]));
    return (
      <>
        <svg class="canvas-edges" aria-hidden="true">
          {edges.map((edge) => {
            const from = byId.get(edge.from);
            if (!from || !byId.has(edge.to)) return null;
            const a = outputPort(place(edge.from), Math.max(0, from.outputs.indexOf(edge.output)), from.outputs.length);
            const b = inputPort(place(edge.to));
            const d = curve(a, b);
            const classes = ['edge', edge.status ? `edge-${edge.status}` : '', edge.invalid ? 'edge-invalid' : '', selectedEdge === edge.index ? 'edge-selected' : ''].join(' ');
            return (
              <g key={`${edge.index}:${edge.from}:${edge.output}:${edge.to}`} data-edge-index={edge.index}>
                <path class="edge-hit" d={d} />
                <path class={classes} d={d} />
                {edge.label !== undefined && (
                  <text class="edge-label" x={(a.x + b.x) / 2} y={(a.y + b.y) / 2 - 6} text-anchor="middle">
                    {edge.label}
                  </text>
                )}
              </g>
            );
          })}
        </svg>
        {nodes.map((node) => {
          const p = place(node.id);
          const classes = [
            'canvas-node',
            node.trigger ? 'trigger' : '',
            node.status ? `status-${node.status}` : '',
            selected.has(node.id) ? 'selected' : '',
            node.errors ? 'has-errors' : node.warnings ? 'has-warnings' : '',
          ].join(' ');
          const state = [node.status, node.pinned ? 'data pinned' : '', node.errors ? `${node.errors} problem(s) refused by the server` : '', node.warnings ? `${node.warnings} possible problem(s)` : '']
            .filter(Boolean)
            .join(', ');
          return (
            <div
              key={node.id}
              class={classes}
              style={{ left: `${p.x}px`, top: `${p.y}px` }}
              data-node-id={node.id}
              tabIndex={0}
              role="button"
              aria-pressed={selected.has(node.id)}
            >
              {/* Named by what it shows (title, type, status), plus what only colour says. */}
              <span class="visually-hidden">Node </span>
              {!node.trigger && <span class="port port-in" data-input-port={node.id} />}
              <span class="node-title">{node.title}</span>
              <span class="node-sub">{node.subtitle}</span>
              {Boolean(node.status || node.errors || node.warnings || node.pinned) && (
                <span class="node-flags">
                  {node.pinned && (
                    <span class="node-pinned" title="Data pinned: a node test takes it as input" aria-hidden="true">
                      pinned
                    </span>
                  )}
                  {node.status && <span class={`node-status badge badge-${node.status}`}>{node.status}</span>}
                  {node.errors ? <span class="node-problems">{node.errors}!</span> : node.warnings ? <span class="node-warnings">{node.warnings}?</span> : null}
                </span>
              )}
              {state && <span class="visually-hidden">, {state}</span>}
              {node.outputs.map((output, i) => (
                <span
                  key={output}
                  class={`port port-out${editable ? ' live' : ''}`}
                  style={{ top: `${((i + 1) * 100) / (node.outputs.length + 1)}%` }}
                  data-output-port={output}
                  data-node={node.id}
                  title={editable ? `Drag to connect ${node.id} (${output})` : output}
                >
                  {node.outputs.length > 1 && <span class="port-name">{output}</span>}
                </span>
              ))}
            </div>
          );
        })}
      </>
    );
  }
}

interface MinimapProps {
  nodes: readonly CanvasNode[];
  positions: ReadonlyMap<string, Position>;
  dragKey: string;
  place: (id: string) => Position;
  view: View;
  /** The frame of the part in view, which a pan moves directly. */
  frameRef: { current: SVGRectElement | null };
  size: () => { width: number; height: number };
  onCenter(p: Position): void;
}

/** The whole workflow small, with the part in view framed; click or drag on it to look elsewhere. */
function Minimap({ nodes, positions, dragKey, place, view, frameRef, size, onCenter }: MinimapProps): ComponentChildren {
  const svg = useRef<SVGSVGElement>(null);
  const dragging = useRef(false);
  if (!nodes.length) return null;
  const all = nodes.map((n) => place(n.id));
  const minX = Math.min(...all.map((p) => p.x)) - 100;
  const minY = Math.min(...all.map((p) => p.y)) - 100;
  const width = Math.max(...all.map((p) => p.x + NODE_WIDTH)) + 100 - minX;
  const height = Math.max(...all.map((p) => p.y + NODE_HEIGHT)) + 100 - minY;
  const { width: vw, height: vh } = size();
  const go = (event: PointerEvent) => {
    const rect = svg.current!.getBoundingClientRect();
    const scale = Math.max(width / rect.width, height / rect.height);
    // preserveAspectRatio xMidYMid meet: the drawing is centred in the box.
    const offsetX = (rect.width - width / scale) / 2;
    const offsetY = (rect.height - height / scale) / 2;
    onCenter({ x: minX + (event.clientX - rect.left - offsetX) * scale, y: minY + (event.clientY - rect.top - offsetY) * scale });
  };
  return (
    <svg
      ref={svg}
      class="minimap"
      aria-hidden="true"
      viewBox={`${minX} ${minY} ${width} ${height}`}
      onPointerDown={(e) => {
        dragging.current = true;
        svg.current!.setPointerCapture(e.pointerId);
        go(e);
      }}
      onPointerMove={(e) => dragging.current && go(e)}
      onPointerUp={() => (dragging.current = false)}
    >
      <MinimapNodes nodes={nodes} all={all} dragKey={dragKey} positions={positions} />
      <rect ref={frameRef} class="minimap-view" x={-view.x / view.k} y={-view.y / view.k} width={vw / view.k} height={vh / view.k} />
    </svg>
  );
}

interface MinimapNodesProps {
  nodes: readonly CanvasNode[];
  all: Position[];
  positions: ReadonlyMap<string, Position>;
  dragKey: string;
}

/** The minimap's nodes, like World re-rendered only when the nodes change, not when the view moves. */
class MinimapNodes extends Component<MinimapNodesProps> {
  shouldComponentUpdate(next: MinimapNodesProps): boolean {
    return next.nodes !== this.props.nodes || next.positions !== this.props.positions || next.dragKey !== this.props.dragKey;
  }

  render({ nodes, all }: MinimapNodesProps) {
    return (
      <>
        {nodes.map((n, i) => (
          <rect key={n.id} class={`minimap-node${n.status ? ` status-${n.status}` : ''}`} x={all[i].x} y={all[i].y} width={NODE_WIDTH} height={NODE_HEIGHT} rx={12} />
        ))}
      </>
    );
  }
}
