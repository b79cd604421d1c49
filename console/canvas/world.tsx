import { Component } from 'preact';
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

/** Where an output port sits on its node, in canvas units. */
export function outputPort(position: Position, index: number, count: number): Position {
  return { x: position.x + NODE_WIDTH, y: position.y + (NODE_HEIGHT * (index + 1)) / (count + 1) };
}
const inputPort = (position: Position): Position => ({ x: position.x, y: position.y + NODE_HEIGHT / 2 });
export const curve = (a: Position, b: Position) => {
  const bend = Math.max(40, Math.abs(b.x - a.x) / 2);
  return `M${a.x},${a.y} C${a.x + bend},${a.y} ${b.x - bend},${b.y} ${b.x},${b.y}`;
};

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
export class World extends Component<WorldProps> {
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
            const classes = [
              'edge',
              edge.status ? `edge-${edge.status}` : '',
              edge.invalid ? 'edge-invalid' : '',
              selectedEdge === edge.index ? 'edge-selected' : '',
            ].join(' ');
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
          const state = [
            node.status,
            node.pinned ? 'data pinned' : '',
            node.errors ? `${node.errors} problem(s) refused by the server` : '',
            node.warnings ? `${node.warnings} possible problem(s)` : '',
          ]
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
                  {node.errors ? (
                    <span class="node-problems">{node.errors}!</span>
                  ) : node.warnings ? (
                    <span class="node-warnings">{node.warnings}?</span>
                  ) : null}
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
