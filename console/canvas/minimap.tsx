import { Component, type ComponentChildren } from 'preact';
import { useRef } from 'preact/hooks';
import type { Position } from '../api-types';
import type { CanvasNode, View } from './world';
import { NODE_HEIGHT, NODE_WIDTH } from './workflow-graph';

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

/** The minimap's width in px (see .minimap) and the bounds of its height. */
const WIDTH = 180;
const MIN_HEIGHT = 70;
const MAX_HEIGHT = 200;

/** The whole workflow small, with the part in view framed; click or drag on it to look elsewhere. */
export function Minimap({ nodes, positions, dragKey, place, view, frameRef, size, onCenter }: MinimapProps): ComponentChildren {
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
      // As tall as the workflow's shape asks (within bounds): a tall tree is not a sliver in a wide box.
      style={{ height: `${Math.round(Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, (WIDTH * height) / width)))}px` }}
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
          <rect
            key={n.id}
            class={`minimap-node${n.status ? ` status-${n.status}` : ''}`}
            x={all[i].x}
            y={all[i].y}
            width={NODE_WIDTH}
            height={NODE_HEIGHT}
            rx={12}
          />
        ))}
      </>
    );
  }
}
