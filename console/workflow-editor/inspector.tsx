import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Definition, NodeSpec, NodeTest, NodeType, NodeTypes, Run } from '../api-types';
import type { CanvasEdge } from '../canvas/canvas';
import { withDisabled, withName } from '../canvas/graph-edits';
import { edgeOutput, outputsOf, outputValue, removeEdge, renameNode, withPinned } from '../canvas/workflow-graph';
import type { ShownProblem } from '../definition-check';
import type { Placed } from './problems';
import { ExpressionScopeContext } from '../expressions/expression-editor';
import type { ExpressionScope } from '../expressions/expression-help';
import { NodeForm } from '../node-form';
import { NodeTestPanel } from './node-test-panel';

/** Fields the node form's Settings show beside themselves. */
const SETTINGS_FIELDS = new Set(['onError', 'continueOnError', 'retryOnFail', 'retry', 'maxTries', 'waitBetweenTries', 'backoff']);

/** The server's rule (NODE_ID in src/domain/workflow-definition.model.ts): ids are read in expressions as nodes.<id>. */
const NODE_ID = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/** The node test as the editor keeps it: its run (drawn on the canvas), and how to start (the draft saved first) or clear one. */
export interface TestState {
  run: Run | null;
  busy: boolean;
  error: unknown;
  start: (body: NodeTest) => void;
  clear: () => void;
}

interface InspectorProps {
  definition: Definition | null;
  types: NodeTypes;
  selected: ReadonlySet<string>;
  selectedNode: NodeSpec | undefined;
  selectedType: NodeType | undefined;
  selectedEdge: number | null;
  canvasEdges: readonly CanvasEdge[];
  canvasEditable: boolean;
  problems: readonly Placed[];
  /** The latest run that reached the selected node. */
  run: Run | null;
  /** The workflow's newest run. */
  latestRunId: string | null;
  test: TestState;
  write: (next: Definition, group?: string) => void;
  select: (ids: string[]) => void;
  onConnect: (from: string, output: string, to: string) => void;
  /** Deletes the selected edge (or nodes). */
  onRemove: () => void;
  /** Opens the node view: input, parameters and output side by side. */
  onOpen: (id: string) => void;
  onAddAfter: (from: string, output: string) => void;
}

/** Beside the canvas: the selected node's id, form, connections and test, or the selected edge, or how to use the canvas. */
export function Inspector(props: InspectorProps) {
  const {
    definition,
    types,
    selected,
    selectedNode,
    selectedType,
    selectedEdge,
    canvasEdges,
    canvasEditable,
    problems,
    run,
    latestRunId,
    test,
    write,
    select,
    onConnect,
    onRemove,
  } = props;
  const scope = useMemo(
    () => (selectedNode && selectedType && definition ? expressionScope(selectedNode, selectedType, definition, run) : null),
    [selectedNode, selectedType, definition, run],
  );
  const problemsOfSelected: ShownProblem[] = problems
    .filter((p) => selectedNode && p.nodeId === selectedNode.id)
    .map((p) => ({ field: p.field, reason: p.reason, nodeId: p.nodeId, advisory: p.advisory }));
  return (
    <aside class="inspector" aria-label="Inspector">
      {selectedNode && selectedType && definition ? (
        <>
          <div class="actions">
            <button type="button" onClick={() => props.onOpen(selectedNode.id)}>
              Open with its data
            </button>
            <label class="check">
              <input
                type="checkbox"
                checked={selectedNode.disabled === true}
                disabled={selectedType.trigger || !canvasEditable}
                onChange={(e) => write(withDisabled(definition, new Set([selectedNode.id]), e.currentTarget.checked))}
              />
              Disabled (passes its input on)
            </label>
          </div>
          <NodeNameField
            node={selectedNode}
            onName={(name) => write(withName(definition, selectedNode.id, name), `name:${selectedNode.id}`)}
          />
          <NodeIdField
            node={selectedNode}
            taken={definition.nodes.map((n) => n.id)}
            onRename={(to) => (write(renameNode(definition, selectedNode.id, to)), select([to]))}
          />
          <ExpressionScopeContext.Provider value={scope}>
            <NodeForm
              node={selectedNode}
              nodeType={selectedType}
              modes={types.parameterModes}
              problems={problemsOfSelected}
              onChange={(node) =>
                write({ ...definition, nodes: definition.nodes.map((n) => (n.id === selectedNode.id ? node : n)) }, `form:${node.id}`)
              }
            />
          </ExpressionScopeContext.Provider>
          <Connections
            node={selectedNode}
            definition={definition}
            onConnect={onConnect}
            onRemove={(i) => write(removeEdge(definition, i))}
            onAddAfter={props.onAddAfter}
          />
          <NodeTestPanel
            key={selectedNode.id}
            node={selectedNode}
            trigger={selectedType.trigger}
            pinned={definition.pinnedData?.[selectedNode.id]}
            lastInput={run ? lastInputOf(selectedNode, definition, run) : undefined}
            lastRunId={run?.id ?? latestRunId}
            test={test}
            onPin={(value) => write(withPinned(definition, selectedNode.id, value))}
            onTest={test.start}
          />
          {problemsOfSelected
            .filter((p) => !p.field.startsWith('parameters') && !p.field.startsWith('parameterMode') && !SETTINGS_FIELDS.has(p.field))
            .map((p, i) => (
              <p key={i} class={p.advisory ? 'warning-text' : 'error-text'}>
                <code>{p.field || '(node)'}</code> {p.reason}
              </p>
            ))}
        </>
      ) : selectedNode ? (
        <p class="error-text">Unknown node type {selectedNode.type}: fix it in the JSON tab.</p>
      ) : selectedEdge !== null && definition?.edges?.[selectedEdge] ? (
        <div>
          <h3>Connection</h3>
          <p>
            <code>{definition.edges[selectedEdge].from}</code> ({canvasEdges[selectedEdge]?.output}) to{' '}
            <code>{definition.edges[selectedEdge].to}</code>
          </p>
          <button type="button" class="secondary" onClick={onRemove} disabled={!canvasEditable}>
            Delete connection
          </button>
        </div>
      ) : (
        <div class="muted small">
          <p>
            Select a node to edit its parameters (
            {selected.size > 1 ? `${selected.size} selected` : 'click it, or Tab to it and press Space; Enter opens it with its data'}).
          </p>
          <p>
            Drag an output port (right edge of a node) onto another node to connect them, or onto empty space to add a node there; the +
            beside each output and on a connection adds one too. Double-click a node to open it with its data. Drag the background to pan,
            Shift+drag to select a rectangle, the wheel to zoom, right-click for a menu.
          </p>
          <p>
            Keys on the canvas: arrows pan (on a node: move it), + / - zoom, 0 fits, N adds a node, D disables, F2 renames, Delete removes,
            Ctrl+Z / Ctrl+Y undo and redo, Ctrl+C / Ctrl+V copy and paste as JSON, Ctrl+D duplicates, Ctrl+A selects all.
          </p>
        </div>
      )}
    </aside>
  );
}

/** What the expressions of `node` read, with the values of the latest run where it has them. */
export function expressionScope(node: NodeSpec, type: NodeType, definition: Definition, run: Run | null): ExpressionScope {
  const runMode = node.runMode ?? type.defaultRunMode;
  const variables = (definition.variables ?? []).map((v) => v.name);
  if (!run) return { runMode, nodeIds: definition.nodes.map((n) => n.id).filter((id) => id !== node.id), variables, sample: null };
  const input = lastInputOf(node, definition, run);
  const values: Record<string, unknown> = {
    nodes: Object.fromEntries(run.steps.filter((s) => s.output !== undefined).map((s) => [s.nodeId, s.output])),
    variables: Object.fromEntries((definition.variables ?? []).map((v) => [v.name, v.type === 'secret' ? '(secret)' : v.value])),
    [runMode]: runMode === 'item' && Array.isArray(input) ? input[0] : input,
  };
  return { runMode, nodeIds: run.steps.map((s) => s.nodeId).filter((id) => id !== node.id), variables, sample: { runId: run.id, values } };
}

/** The node's input in `run`: as recorded, else (it did not run then) what its first predecessor sent it; undefined when neither is known. */
export function lastInputOf(node: NodeSpec, definition: Definition, run: Run): unknown {
  const steps = new Map(run.steps.map((s) => [s.nodeId, s]));
  const input = steps.get(node.id)?.input;
  if (input !== undefined) return input;
  const edge = (definition.edges ?? []).find((e) => e.to === node.id);
  const from = edge && definition.nodes.find((n) => n.id === edge.from);
  return edge && from
    ? outputValue(steps.get(from.id)?.output, edgeOutput(edge, from, definition.edges ?? []), outputsOf(from, definition.edges))
    : undefined;
}

/** The name shown on the canvas; the id (what expressions read) stays as it is. */
export function NodeNameField({ node, onName }: { node: NodeSpec; onName: (name: string) => void }) {
  return (
    <div class="node-id">
      <label>
        Name
        <input value={node.name ?? ''} placeholder={node.id} maxLength={200} onInput={(e) => onName(e.currentTarget.value)} />
      </label>
    </div>
  );
}

export function NodeIdField({ node, taken, onRename }: { node: NodeSpec; taken: string[]; onRename: (id: string) => void }) {
  const [value, setValue] = useState(node.id);
  useEffect(() => setValue(node.id), [node.id]);
  const problem =
    value === node.id
      ? ''
      : !NODE_ID.test(value)
        ? 'must start with a letter or _ and hold at most 64 letters, digits, _ or -'
        : taken.includes(value)
          ? 'is taken by another node'
          : '';
  const apply = () => value !== node.id && !problem && onRename(value);
  return (
    <div class="node-id">
      <label>
        Node id
        <input
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
          onBlur={apply}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              apply();
            }
          }}
        />
      </label>
      {problem ? (
        <div class="error-text">{problem}</div>
      ) : (
        <div class="hint">Expressions read this node's output as nodes.{node.id}; renaming updates the edges, not expressions.</div>
      )}
    </div>
  );
}

/** The node's edges, in and out, with a way to add one per output by keyboard (the canvas drags them). */
export function Connections({
  node,
  definition,
  onConnect,
  onRemove,
  onAddAfter,
}: {
  node: NodeSpec;
  definition: Definition;
  onConnect: (from: string, output: string, to: string) => void;
  onRemove: (index: number) => void;
  onAddAfter: (from: string, output: string) => void;
}) {
  const edges = definition.edges ?? [];
  const outputs = outputsOf(node, edges);
  const byId = new Map(definition.nodes.map((n) => [n.id, n]));
  const [targets, setTargets] = useState<Record<string, string>>({});
  return (
    <fieldset class="node-form" aria-label={`Connections of ${node.id}`}>
      <legend>Connections</legend>
      <ul class="plain">
        {edges.map((e, i) =>
          e.to === node.id ? (
            <li key={i}>
              from <code>{e.from}</code> ({edgeOutput(e, byId.get(e.from), edges)}){' '}
              <button type="button" class="link danger" onClick={() => onRemove(i)} aria-label={`Remove the connection from ${e.from}`}>
                Remove
              </button>
            </li>
          ) : null,
        )}
      </ul>
      {outputs.map((output) => (
        <div key={output}>
          <div>
            Output <strong>{output}</strong> to{' '}
            {edges.filter((e) => e.from === node.id && edgeOutput(e, node, edges) === output).length === 0 && (
              <span class="muted">nothing yet</span>
            )}
          </div>
          <ul class="plain">
            {edges.map((e, i) =>
              e.from === node.id && edgeOutput(e, node, edges) === output ? (
                <li key={i}>
                  <code>{e.to}</code>{' '}
                  <button
                    type="button"
                    class="link danger"
                    onClick={() => onRemove(i)}
                    aria-label={`Remove the connection to ${e.to} (${output})`}
                  >
                    Remove
                  </button>
                </li>
              ) : null,
            )}
          </ul>
          <div class="inline">
            <select
              aria-label={`Connect ${output} to`}
              value={targets[output] ?? ''}
              onChange={(e) => setTargets({ ...targets, [output]: e.currentTarget.value })}
            >
              <option value="">(node)</option>
              {definition.nodes
                .filter((n) => n.id !== node.id)
                .map((n) => (
                  <option key={n.id} value={n.id}>
                    {n.id}
                  </option>
                ))}
            </select>
            <button type="button" class="secondary" disabled={!targets[output]} onClick={() => onConnect(node.id, output, targets[output])}>
              Connect
            </button>
            <button type="button" class="secondary" onClick={() => onAddAfter(node.id, output)} aria-label={`+ New node after ${output}`}>
              + New node
            </button>
          </div>
        </div>
      ))}
    </fieldset>
  );
}

/** The JSON with line numbers beside it (the server's problems name lines in expressions, people name them in the text). */
export function JsonEditor({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  const gutter = useRef<HTMLPreElement>(null);
  const lines = value.split('\n').length;
  return (
    <label>
      Definition (JSON)
      <div class="json-editor">
        <pre class="gutter" ref={gutter} aria-hidden="true">
          {Array.from({ length: lines }, (_, i) => i + 1).join('\n')}
        </pre>
        <textarea
          class="code"
          rows={24}
          spellcheck={false}
          wrap="off"
          value={value}
          onInput={(e) => onChange(e.currentTarget.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
    </label>
  );
}
