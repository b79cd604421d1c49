import type { Position } from '../api-types';
import type { CanvasNote, View } from './world';
import { NODE_HEIGHT, NODE_WIDTH } from './workflow-graph';

/** Far enough to fit 200 nodes in a phone's view. */
export const MIN_ZOOM = 0.02;
/**
 * Below this zoom a node's own text is a few pixels high: nodes are drawn as coloured boxes with
 * their name and status in a label of constant size, and ports and edge labels are left out
 * (which also keeps a pan over 200 nodes cheap: test/bench/canvas-pan.bench.ts).
 */
export const FAR_ZOOM = 0.5;
export const MAX_ZOOM = 2;
export const KEY_STEP = 10;
/** The corner the minimap covers: a fitted view keeps its nodes clear of it. */
export const MINIMAP = { width: 190, height: 130 };
export const transformOf = (v: View) => `translate(${v.x}px, ${v.y}px) scale(${v.k})`;
export const clamp = (k: number) => Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k));

export type Gesture =
  | { kind: 'pan'; startX: number; startY: number; view: View; moved: boolean }
  | { kind: 'drag'; startX: number; startY: number; ids: string[]; moved: boolean }
  | { kind: 'note'; startX: number; startY: number; id: string; resize: boolean; moved: boolean }
  | { kind: 'band'; start: Position; additive: boolean }
  | { kind: 'connect'; from: string; output: string; start: Position };

/**
 * The part of the world drawn in full, in canvas units: the view and this many screen px around it.
 * Nodes outside are empty placeholders (still in the page, so Tab, a screen reader and a node's
 * locator reach them) and edges outside are left out: while a view pans, chromium re-layerizes the
 * whole world every frame at a cost that grows with what is drawn in it, so at zoom 1 the 200
 * nodes of test/bench/canvas-pan.bench.ts took 30+ ms a frame, the dozens near the view a few ms.
 * The window moves when the view leaves it, so a pan re-renders the world once per this many px.
 */
export const CULL_MARGIN = 500;

export interface CullWindow {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  /** The zoom it was made at. */
  k: number;
}

/** The window around a view of the given size. */
export function cullWindow(v: View, width: number, height: number): CullWindow {
  return {
    x1: (-v.x - CULL_MARGIN) / v.k,
    y1: (-v.y - CULL_MARGIN) / v.k,
    x2: (width - v.x + CULL_MARGIN) / v.k,
    y2: (height - v.y + CULL_MARGIN) / v.k,
    k: v.k,
  };
}

/**
 * The window still serves the view: the view is inside it, and it was not made at a much smaller
 * zoom (zoomed in from there, it would draw far more than the view and its margin).
 */
export function covers(w: CullWindow | null, v: View, width: number, height: number): boolean {
  return (
    w !== null &&
    v.k <= w.k * 1.5 &&
    -v.x / v.k >= w.x1 &&
    -v.y / v.k >= w.y1 &&
    (width - v.x) / v.k <= w.x2 &&
    (height - v.y) / v.k <= w.y2
  );
}

/** A box (canvas units) meets the window; a null window draws everything. */
export const meets = (w: CullWindow | null, x1: number, y1: number, x2: number, y2: number) =>
  w === null || (x1 < w.x2 && x2 > w.x1 && y1 < w.y2 && y2 > w.y1);

/** The view that shows every node and note in `box` (40 px around them, zoom at most 1); null when there are none. */
export function fittedView(
  positions: ReadonlyMap<string, Position>,
  notes: readonly CanvasNote[],
  box: { width: number; height: number },
): View | null {
  const all = [...positions.values(), ...notes.map((n) => n.position)];
  if (!all.length) return null;
  const minX = Math.min(...all.map((p) => p.x)) - 40;
  const minY = Math.min(...all.map((p) => p.y)) - 40;
  const maxX = Math.max(...[...positions.values()].map((p) => p.x + NODE_WIDTH), ...notes.map((n) => n.position.x + n.width)) + 40;
  const maxY = Math.max(...[...positions.values()].map((p) => p.y + NODE_HEIGHT), ...notes.map((n) => n.position.y + n.height)) + 40;
  const { width, height } = box;
  const k = clamp(Math.min(width / (maxX - minX), height / (maxY - minY), 1));
  return { k, x: (width - (maxX - minX) * k) / 2 - minX * k, y: (height - (maxY - minY) * k) / 2 - minY * k };
}

/** `v` panned (never zoomed) just enough that a node-sized box at `at` is in `box` with a 40 px margin; `v` itself when it is. */
export function revealed(v: View, at: Position, box: { width: number; height: number }): View {
  const { width, height } = box;
  const margin = 40;
  const left = at.x * v.k + v.x;
  const top = at.y * v.k + v.y;
  const right = (at.x + NODE_WIDTH) * v.k + v.x;
  const bottom = (at.y + NODE_HEIGHT) * v.k + v.y;
  const dx = left < margin ? margin - left : right > width - margin ? width - margin - right : 0;
  const dy = top < margin ? margin - top : bottom > height - margin ? height - margin - bottom : 0;
  return dx || dy ? { ...v, x: v.x + dx, y: v.y + dy } : v;
}

/** The ids of the nodes (placed by `place`) that a rubber band from `a` to `b` touches. */
export function nodesInBand(ids: string[], place: (id: string) => Position, a: Position, b: Position): string[] {
  const [x1, x2] = [Math.min(a.x, b.x), Math.max(a.x, b.x)];
  const [y1, y2] = [Math.min(a.y, b.y), Math.max(a.y, b.y)];
  return ids.filter((id) => {
    const p = place(id);
    return p.x < x2 && p.x + NODE_WIDTH > x1 && p.y < y2 && p.y + NODE_HEIGHT > y1;
  });
}

/** The directions of the arrow keys. */
export const ARROWS: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };

/** `note` moved, or resized (at least 80 x 40), by a drag of (dx, dy) in progress. */
export function draggedNote(note: CanvasNote, drag: { dx: number; dy: number; resize: boolean }): CanvasNote {
  return drag.resize
    ? { ...note, width: Math.max(80, note.width + drag.dx), height: Math.max(40, note.height + drag.dy) }
    : { ...note, position: { x: note.position.x + drag.dx, y: note.position.y + drag.dy } };
}

/** Sets the minimap's frame to what view `v` shows of a canvas of that size (during a pan, without a render). */
export function frameView(frame: SVGRectElement, v: View, size: { width: number; height: number }): void {
  frame.setAttribute('x', String(-v.x / v.k));
  frame.setAttribute('y', String(-v.y / v.k));
  frame.setAttribute('width', String(size.width / v.k));
  frame.setAttribute('height', String(size.height / v.k));
}
