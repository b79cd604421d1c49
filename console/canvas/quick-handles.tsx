import type { Position } from '../api-types';
import { edgeMiddle, inputPort, outputPort, type CanvasEdge, type CanvasNode } from './world';

interface QuickHandlesProps {
  nodes: readonly CanvasNode[];
  edges: readonly CanvasEdge[];
  positions: ReadonlyMap<string, Position>;
  place: (id: string) => Position;
  /** The node hovered (or selected). */
  nodeId: string | null;
  /** The edge hovered. */
  edgeIndex: number | null;
}

/**
 * Drawn only where the pointer is (not on all 200 nodes and their edges, which every frame of a
 * pan would then paint): the + of each output of the hovered (or selected) node, and the + in the
 * middle of the hovered edge, which inserts a node there.
 */
export function QuickHandles({ nodes, edges, positions, place, nodeId, edgeIndex }: QuickHandlesProps) {
  const node = nodeId ? nodes.find((n) => n.id === nodeId) : undefined;
  const edge = edgeIndex !== null ? edges.find((e) => e.index === edgeIndex) : undefined;
  const from = edge ? nodes.find((n) => n.id === edge.from) : undefined;
  const middle =
    edge && from && positions.has(edge.to)
      ? edgeMiddle(
          outputPort(place(edge.from), Math.max(0, from.outputs.indexOf(edge.output)), from.outputs.length),
          inputPort(place(edge.to)),
        ).middle
      : null;
  const outputs = node?.outputs ?? [];
  return (
    <>
      {node &&
        outputs.map((output) => {
          const port = outputPort(place(node.id), node.outputs.indexOf(output), node.outputs.length);
          return (
            <span
              key={output}
              class="port-add floating"
              style={{ left: `${port.x + 22}px`, top: `${port.y - 10}px` }}
              data-add-after={node.id}
              data-output={output}
              title={`Add a node after ${node.title}${node.outputs.length > 1 ? ` (${output})` : ''}`}
              aria-hidden="true"
            >
              +
            </span>
          );
        })}
      {middle && (
        <span
          class="edge-insert"
          style={{ left: `${middle.x - 11}px`, top: `${middle.y - 11}px` }}
          data-edge-insert={edgeIndex}
          title="Insert a node here"
          aria-hidden="true"
        >
          +
        </span>
      )}
    </>
  );
}
