import { useLayoutEffect, useRef } from 'preact/hooks';
import type { Definition, NodeSpec, NodeType, NodeTypes, Run } from '../api-types';
import type { ShownProblem } from '../definition-check';
import { ExpressionScopeContext } from '../expressions/expression-editor';
import { NodeForm } from '../node-form';
import { glyphOf } from '../canvas/node-icons';
import { UserText } from '../ui';
import { DataView } from './data-view';
import { expressionScope, lastInputOf } from './inspector';

interface NodeViewProps {
  node: NodeSpec;
  nodeType: NodeType;
  types: NodeTypes;
  definition: Definition;
  /** The latest run that reached the node (the one drawn on the canvas first). */
  run: Run | null;
  problems: ShownProblem[];
  onChange: (node: NodeSpec) => void;
  onClose: () => void;
}

/**
 * A node opened as n8n opens it: what it received, its parameters and what it produced, side by
 * side. The data comes from the latest run that reached the node, its input from the data pinned
 * on it when there is some; a field dragged from the input onto a parameter makes it read that
 * field as an expression.
 */
export function NodeView({ node, nodeType, types, definition, run, problems, onChange, onClose }: NodeViewProps) {
  const close = useRef<HTMLButtonElement>(null);
  // A layout effect, not an effect: the focus must be inside the view before the next key arrives
  // (an effect runs after paint, so on a busy machine an Escape typed at once went to the canvas).
  useLayoutEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    close.current?.focus();
    // Back where the user was (the node on the canvas) once the view closes.
    return () => before?.focus?.();
  }, []);
  const step = run?.steps.find((s) => s.nodeId === node.id);
  const pinned = definition.pinnedData?.[node.id];
  const input = pinned !== undefined ? pinned : run ? lastInputOf(node, definition, run) : undefined;
  const runMode = node.runMode ?? nodeType.defaultRunMode;
  const scope = expressionScope(node, nodeType, definition, run);
  const title = node.name || node.id;
  const source = pinned !== undefined ? 'pinned data' : run ? `run ${run.id}${step ? ` (${step.status})` : ''}` : null;
  return (
    <div class="node-view-backdrop" onPointerDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        class="node-view"
        role="dialog"
        aria-modal="true"
        aria-label={`Node ${title}`}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && !e.defaultPrevented) {
            e.stopPropagation();
            onClose();
          }
        }}
      >
        <div class="node-view-head">
          <h2>
            <span class="node-icon" aria-hidden="true">
              {glyphOf(node.type)}
            </span>{' '}
            <UserText text={title} /> <span class="muted small">{nodeType.displayName}</span>
          </h2>
          <span class="muted small">
            {source ? `Data from ${source}` : 'No run has reached this node yet: test it or run the workflow.'}
          </span>
          <button type="button" class="secondary" ref={close} onClick={onClose}>
            Close
          </button>
        </div>
        <div class="node-view-columns">
          <section class="node-view-data" aria-label={`Input of ${node.id}`}>
            <h3>Input</h3>
            <DataView label={`Input of ${node.id}`} value={input} root={runMode} />
            <p class="hint">Drag a field onto a parameter to use it there.</p>
          </section>
          <section class="node-view-parameters" aria-label={`Parameters and settings of ${node.id}`}>
            <ExpressionScopeContext.Provider value={scope}>
              <NodeForm node={node} nodeType={nodeType} modes={types.parameterModes} problems={problems} onChange={onChange} />
            </ExpressionScopeContext.Provider>
          </section>
          <section class="node-view-data" aria-label={`Output of ${node.id}`}>
            <h3>Output</h3>
            {step?.error && (
              <p class="error-text">
                <UserText text={step.error.message} /> <span class="muted">({step.error.code})</span>
              </p>
            )}
            {step?.status === 'skipped' && node.disabled && <p class="muted small">Disabled: its input went on unchanged.</p>}
            <DataView label={`Output of ${node.id}`} value={step?.output} root={null} />
          </section>
        </div>
      </div>
    </div>
  );
}
