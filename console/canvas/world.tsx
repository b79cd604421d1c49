import { Component, Fragment } from 'preact';
import type { Position } from '../api-types';
import { meets, type CullWindow } from './canvas-view';
import { glyphOf } from './node-icons';
import { NODE_HEIGHT, NODE_WIDTH, type Kind } from './workflow-graph';

export interface CanvasNode {
  id: string;
  title: string;
  subtitle: string;
  /** The node's type, for its icon. */
  type: string;
  kind: Kind;
  outputs: string[];
  trigger: boolean;
  /** A run's step status (succeeded, failed, skipped, waiting, reused, ...), drawn as the node's colour. */
  status?: string;
  /** Turned off in the definition: drawn greyed, it passes its input on. */
  disabled?: boolean;
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
  /** `skipped` draws the edge grey and dashed: nothing went along it; `flowing` animates it (a run in progress). */
  status?: 'skipped' | 'live' | 'flowing';
  invalid?: boolean;
}

/** A sticky note as the canvas draws it. */
export interface CanvasNote {
  id: string;
  text: string;
  position: Position;
  width: number;
  height: number;
}

export interface View {
  x: number;
  y: number;
  k: number;
}

/** Where an output port sits on its node, in canvas units. */
export function outputPort(position: Position, index: number, count: number): Position {
  return { x: position.x + NODE_WIDTH, y: position.y + (NODE_HEIGHT * (index + 1)) / (count + 1) };
}
export const inputPort = (position: Position): Position => ({ x: position.x, y: position.y + NODE_HEIGHT / 2 });
export const curve = (a: Position, b: Position) => {
  const bend = Math.max(40, Math.abs(b.x - a.x) / 2);
  return `M${a.x},${a.y} C${a.x + bend},${a.y} ${b.x - bend},${b.y} ${b.x},${b.y}`;
};

/**
 * The middle of an edge's curve, and a point beside it (on the upper side): a label there reads
 * beside the line instead of across it.
 */
export function edgeMiddle(a: Position, b: Position, offset = 12): { middle: Position; beside: Position } {
  const bend = Math.max(40, Math.abs(b.x - a.x) / 2);
  const p1 = { x: a.x + bend, y: a.y };
  const p2 = { x: b.x - bend, y: b.y };
  const middle = { x: (a.x + 3 * p1.x + 3 * p2.x + b.x) / 8, y: (a.y + 3 * p1.y + 3 * p2.y + b.y) / 8 };
  const tx = b.x + p2.x - p1.x - a.x;
  const ty = b.y + p2.y - p1.y - a.y;
  const length = Math.hypot(tx, ty) || 1;
  let nx = -ty / length;
  let ny = tx / length;
  if (ny > 0) [nx, ny] = [-nx, -ny];
  return { middle, beside: { x: middle.x + nx * offset, y: middle.y + ny * offset + 4 } };
}

const STATUS_MARK: Record<string, string> = {
  succeeded: '✓',
  failed: '✗',
  skipped: '–',
  'not-run': '–',
  running: '…',
  waiting: '…',
  reused: '↺',
  canceled: '■',
};

interface WorldProps {
  nodes: readonly CanvasNode[];
  edges: readonly CanvasEdge[];
  notes: readonly CanvasNote[];
  positions: ReadonlyMap<string, Position>;
  place: (id: string) => Position;
  placeNote: (note: CanvasNote) => CanvasNote;
  selected: ReadonlySet<string>;
  selectedEdge: number | null;
  selectedNote: string | null;
  editable: boolean;
  dragKey: string;
  /** What is drawn in full (see CULL_MARGIN): other nodes are placeholders, other edges left out. */
  cull: CullWindow | null;
}

/**
 * The notes, nodes and edges, re-rendered only when they change, not when the view moves: 200
 * nodes then pan at the cost of one transform.
 */
export class World extends Component<WorldProps> {
  shouldComponentUpdate(next: WorldProps): boolean {
    const p = this.props;
    return (
      next.nodes !== p.nodes ||
      next.edges !== p.edges ||
      next.notes !== p.notes ||
      next.positions !== p.positions ||
      next.selected !== p.selected ||
      next.selectedEdge !== p.selectedEdge ||
      next.selectedNote !== p.selectedNote ||
      next.dragKey !== p.dragKey ||
      next.editable !== p.editable ||
      next.cull !== p.cull
    );
  }

  render({ nodes, edges, notes, place, placeNote, selected, selectedEdge, selectedNote, editable, cull }: WorldProps) {
    const byId = new Map(nodes.map((n) => [n.id, n]));
    return (
      <>
        {notes.map((original) => {
          const note = placeNote(original);
          return (
            <div
              key={note.id}
              class={`canvas-note${selectedNote === note.id ? ' selected' : ''}`}
              style={{ left: `${note.position.x}px`, top: `${note.position.y}px`, width: `${note.width}px`, height: `${note.height}px` }}
              data-note-id={note.id}
              role="note"
              aria-label={`Sticky note: ${note.text.slice(0, 80) || 'empty'}`}
            >
              <div class="note-text">{note.text || (editable ? 'Double-click to write' : '')}</div>
              {editable && <span class="note-resize" data-note-resize={note.id} aria-hidden="true" />}
            </div>
          );
        })}
        <svg class="canvas-edges" aria-hidden="true">
          {edges.map((edge) => {
            const from = byId.get(edge.from);
            if (!from || !byId.has(edge.to)) return null;
            const a = outputPort(place(edge.from), Math.max(0, from.outputs.indexOf(edge.output)), from.outputs.length);
            const b = inputPort(place(edge.to));
            // The curve lies within its control points (curve()), its label 12 px beside it.
            const bend = Math.max(40, Math.abs(b.x - a.x) / 2);
            const [top, bottom] = a.y < b.y ? [a.y, b.y] : [b.y, a.y];
            if (!meets(cull, Math.min(a.x, b.x - bend) - 20, top - 20, Math.max(a.x + bend, b.x) + 20, bottom + 20)) return null;
            const d = curve(a, b);
            const { beside } = edgeMiddle(a, b);
            const classes = [
              'edge',
              edge.status ? `edge-${edge.status}` : '',
              edge.invalid ? 'edge-invalid' : '',
              selectedEdge === edge.index ? 'edge-selected' : '',
            ].join(' ');
            return (
              <g key={`${edge.index}:${edge.from}:${edge.output}:${edge.to}`} class="edge-group" data-edge-index={edge.index}>
                <path class="edge-hit" d={d} />
                <path class={classes} d={d} />
                {edge.label !== undefined && (
                  <text class="edge-label" x={beside.x} y={beside.y} text-anchor="middle">
                    {edge.label}
                  </text>
                )}
              </g>
            );
          })}
        </svg>
        {nodes.map((node) => {
          const p = place(node.id);
          const state = [
            node.disabled ? 'disabled' : '',
            node.status,
            node.pinned ? 'data pinned' : '',
            node.errors ? `${node.errors} problem(s) refused by the server` : '',
            node.warnings ? `${node.warnings} possible problem(s)` : '',
          ]
            .filter(Boolean)
            .join(', ');
          if (!selected.has(node.id) && !meets(cull, p.x, p.y, p.x + NODE_WIDTH, p.y + NODE_HEIGHT)) {
            // Out of the window: nothing painted, but focusable and named as the drawn node is.
            return (
              <div
                key={node.id}
                class="canvas-node culled"
                style={{ left: `${p.x}px`, top: `${p.y}px` }}
                data-node-id={node.id}
                tabIndex={0}
                role="button"
                aria-pressed={false}
                aria-label={`Node ${node.title} ${node.subtitle}${state ? `, ${state}` : ''}`}
              />
            );
          }
          const classes = [
            'canvas-node',
            `kind-${node.kind.toLowerCase()}`,
            node.trigger ? 'trigger' : '',
            node.disabled ? 'disabled' : '',
            node.status ? `status-${node.status}` : '',
            selected.has(node.id) ? 'selected' : '',
            node.errors ? 'has-errors' : node.warnings ? 'has-warnings' : '',
          ].join(' ');
          return (
            <div
              key={node.id}
              class={classes}
              style={{ left: `${p.x}px`, top: `${p.y}px` }}
              data-node-id={node.id}
              tabIndex={0}
              role="button"
              aria-pressed={selected.has(node.id)}
              title={`${node.title} (${node.subtitle})`}
            >
              {/* Named by what it shows (title, type, status), plus what only colour says. */}
              <span class="visually-hidden">Node </span>
              {!node.trigger && <span class="port port-in" data-input-port={node.id} />}
              <span class="node-icon" aria-hidden="true">
                {glyphOf(node.type)}
              </span>
              <span class="node-text">
                <span class="node-title">{node.title}</span>
                <span class="node-sub">{node.subtitle}</span>
              </span>
              {/* Far out, the name and status drawn at a readable size whatever the zoom (see .canvas.far). */}
              <span class="node-far" aria-hidden="true">
                {node.status ? `${STATUS_MARK[node.status] ?? ''} ` : ''}
                {node.title}
              </span>
              {Boolean(node.status || node.errors || node.warnings || node.pinned || node.disabled) && (
                <span class="node-flags">
                  {node.disabled && (
                    <span class="node-disabled" aria-hidden="true">
                      disabled
                    </span>
                  )}
                  {node.pinned && (
                    <span class="node-pinned" title="Data pinned: a node test takes it as input" aria-hidden="true">
                      pinned
                    </span>
                  )}
                  {node.status && <span class={`node-status badge badge-${node.status}`}>{node.status}</span>}
                  {node.errors ? (
                    <span class="node-problems">{node.errors}!</span>
                  ) : node.warnings ? (
                    <span class="node-warnings">{node.warnings}?</span>
                  ) : null}
                </span>
              )}
              {state && <span class="visually-hidden">, {state}</span>}
              {node.outputs.map((output, i) => {
                const top = `${((i + 1) * 100) / (node.outputs.length + 1)}%`;
                return (
                  <Fragment key={output}>
                    {node.outputs.length > 1 && (
                      <span class="port-name" style={{ top }} aria-hidden="true">
                        {output}
                      </span>
                    )}
                    <span
                      class={`port port-out${editable ? ' live' : ''}`}
                      style={{ top }}
                      data-output-port={output}
                      data-node={node.id}
                      title={editable ? `Drag to connect ${node.id} (${output}), or drop on empty space to add a node` : output}
                    />
                  </Fragment>
                );
              })}
            </div>
          );
        })}
      </>
    );
  }
}
