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
