import type { Position } from '../api-types';
import type { View } from './world';

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
