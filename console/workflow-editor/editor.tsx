import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, FieldProblem } from '../api-client';
import type { Definition, DefinitionView, NodeType, NodeTypes, Position, Run, Version, Workflow } from '../api-types';
import { Canvas, type CanvasControl, type CanvasEdge, type CanvasNode } from '../canvas/canvas';
import { Catalogue } from '../canvas/catalogue';
import { useHistory } from '../canvas/history';
import {
  addNode,
  connect,
  drawable,
  drawNodes,
  edgeOutput,
  fragmentOf,
  layoutAll,
  NODE_HEIGHT,
  NODE_WIDTH,
  outputsOf,
  parseFragment,
  paste,
  placeProblem,
  positionsOf,
  removeEdge,
  removeNodes,
  withPositions,
} from '../canvas/workflow-graph';
import { runEdges, stepStatus } from '../canvas/run-drawing';
import { checkDefinition, ShownProblem } from '../definition-check';
import { nodeTypeOf } from '../node-types';
import { ErrorBox, Section, useAction } from '../ui';
import { Inspector, JsonEditor, type TestState } from './inspector';
import { ProblemList, RunSection } from './sections';

/** The definition as the editor shows it: what PUT takes back (a secret's `set` flag is view-only). */
function editable(definition: DefinitionView): string {
  const variables = (definition.variables ?? []).map(({ name, type, value }) => ({ name, type, value }));
  // Pinned data is part of the draft (never of a published version): shown, and sent back, only when there is some.
  const pinned = definition.pinnedData && Object.keys(definition.pinnedData).length ? { pinnedData: definition.pinnedData } : {};
  return JSON.stringify({ nodes: definition.nodes, edges: definition.edges ?? [], variables, ...pinned }, null, 2);
}

/** `at`, or below it where no node is drawn: a new node never hides another. */
function freeSpot(at: Position, positions: ReadonlyMap<string, Position>): Position {
  const taken = [...positions.values()];
  const spot = { ...at };
  while (taken.some((p) => Math.abs(p.x - spot.x) < NODE_WIDTH && Math.abs(p.y - spot.y) < NODE_HEIGHT + 10)) spot.y += NODE_HEIGHT + 30;
  return spot;
}

/** What outlives the editor when a save starts it afresh. */
export interface Kept {
  selected: string[];
}

interface EditorProps {
  base: string;
  workflow: Workflow;
  types: NodeTypes;
  lastRun: Run | null;
  notice: string;
  setNotice: (notice: string) => void;
  kept: { current: Kept };
  test: TestState;
  onSaved: () => void;
}

/** What Ctrl+C put on the clipboard, for the Paste button when the browser will not read the clipboard. */
let copied: string | null = null;

export function Editor({ base, workflow, types, lastRun, notice, setNotice, kept, test, onSaved }: EditorProps) {
  const [name, setName] = useState(workflow.name);
  const history = useHistory(editable(workflow.definition));
  const text = history.value;
  const [tab, setTab] = useState<'canvas' | 'json'>('canvas');
  const [selected, setSelected] = useState<ReadonlySet<string>>(() => new Set(kept.current.selected));
  const [selectedEdge, setSelectedEdge] = useState<number | null>(null);
  const [catalogue, setCatalogue] = useState(false);
  const [serverProblems, setServerProblems] = useState<{ problems: FieldProblem[]; sent: Definition | null }>({ problems: [], sent: null });
  const [canvasNote, setCanvasNote] = useState('');
  const control = useRef<CanvasControl | null>(null);
  const frame = useRef<HTMLDivElement>(null);

  const saved = useMemo(() => editable(workflow.definition), [workflow]);
  const dirty = text !== saved || name !== workflow.name;
  const check = useMemo(() => checkDefinition(text, types.items, types.parameterModes), [text, types]);
  /** The definition as the canvas draws it; editable there only when every node and edge is well formed. */
  const definition = useMemo(() => drawable(check.value), [check]);
  const raw = check.value as { nodes?: unknown[]; edges?: unknown[] } | undefined;
  const canvasEditable =
    definition !== null && definition.nodes.length === raw?.nodes?.length && (definition.edges ?? []).length === (raw?.edges?.length ?? 0);
  const positions = useMemo(() => (definition ? positionsOf(definition) : new Map<string, Position>()), [definition]);

  const write = (next: Definition, group?: string) => history.set(JSON.stringify(next, null, 2), group);

  // Problems placed on nodes: the server's refusal (red) first, then the console's own check (amber).
  const placed = useMemo(
    () => [
      ...serverProblems.problems.map((p) => ({ ...placeProblem(p, serverProblems.sent), reason: p.reason, advisory: false, original: p })),
      ...check.problems.map((p) => ({ ...placeProblem(p, definition), reason: p.reason, advisory: true, original: p })),
    ],
    [serverProblems, check, definition],
  );
  const testSteps = useMemo(() => new Map((test.run?.steps ?? []).map((s) => [s.nodeId, s])), [test.run]);
  const canvasNodes = useMemo<CanvasNode[]>(
    () =>
      definition
        ? drawNodes(definition, types.items).map((n) => ({
            ...n,
            status: stepStatus(testSteps.get(n.id)),
            pinned: definition.pinnedData?.[n.id] !== undefined,
            errors: placed.filter((p) => p.nodeId === n.id && !p.advisory).length,
            warnings: placed.filter((p) => p.nodeId === n.id && p.advisory).length,
          }))
        : [],
    [definition, placed, types, testSteps],
  );
  const canvasEdges = useMemo<CanvasEdge[]>(() => {
    if (!definition) return [];
    const edges = definition.edges ?? [];
    const byId = new Map(definition.nodes.map((n) => [n.id, n]));
    // A node test's items on the edges it went along; the others as they are.
    const tested = test.run ? runEdges(definition, test.run, true) : null;
    return edges.map((edge, index) => ({
      index,
      from: edge.from,
      to: edge.to,
      output: edgeOutput(edge, byId.get(edge.from), edges),
      invalid: placed.some((p) => p.edgeIndex === index),
      ...(tested?.[index]?.status ? { label: tested[index].label, status: tested[index].status } : {}),
    }));
  }, [definition, placed, test.run]);

  const only = selected.size === 1 ? [...selected][0] : null;
  const selectedNode = definition?.nodes.find((n) => n.id === only);
  const selectedType = selectedNode ? nodeTypeOf(types.items, selectedNode.type, selectedNode.version) : undefined;
  const hasTrigger = definition?.nodes.some((n) => nodeTypeOf(types.items, n.type)?.trigger) ?? false;

  const select = (ids: string[]) => {
    kept.current.selected = ids;
    setSelected(new Set(ids));
    setSelectedEdge(null);
  };
  /** The layout the user sees, saved as positions the first time anything moves. */
  const freeze = (def: Definition, moved: Map<string, Position> = new Map()) => withPositions(def, new Map([...positions, ...moved]));

  const actions = {
    add(type: NodeType) {
      if (!definition) return;
      const from = selectedNode && !type.trigger ? selectedNode : undefined;
      const fromAt = from ? positions.get(from.id) : undefined;
      const at = fromAt
        ? { x: fromAt.x + 260, y: fromAt.y + 20 * (definition.edges ?? []).filter((e) => e.from === from!.id).length }
        : (control.current?.center() ?? { x: 0, y: 0 });
      const after = from ? { from: from.id, output: outputsOf(from, definition.edges)[0] } : undefined;
      const result = addNode(freeze(definition), type, freeSpot(at, positions), after);
      write(result.definition);
      select([result.id]);
      setCatalogue(false);
    },
    remove() {
      if (!definition) return;
      if (selectedEdge !== null) write(removeEdge(definition, selectedEdge));
      else if (selected.size) write(removeNodes(definition, selected));
      select([]);
    },
    duplicate() {
      if (!definition || !selected.size) return;
      const result = paste(freeze(definition), fragmentOf(definition, selected, positions), { x: 40, y: 40 }, types.items);
      write(result.definition);
      select(result.ids);
    },
    copyText(): string | null {
      if (!definition || !selected.size) return null;
      copied = JSON.stringify(fragmentOf(definition, selected, positions), null, 2);
      return copied;
    },
    pasteText(clip: string) {
      const fragment = parseFragment(clip);
      if (!definition || !fragment) {
        setCanvasNote('The clipboard holds no nodes: copy nodes of a workflow first (their JSON).');
        return;
      }
      // The copy lands in view: its top left corner at the middle of the canvas.
      const at = control.current?.center() ?? { x: 0, y: 0 };
      const left = Math.min(...fragment.nodes.map((n) => n.position?.x ?? 0));
      const top = Math.min(...fragment.nodes.map((n) => n.position?.y ?? 0));
      const result = paste(freeze(definition), fragment, { x: at.x - left, y: at.y - top }, types.items);
      write(result.definition);
      select(result.ids);
      setCanvasNote(result.ids.length ? `Pasted ${result.ids.length} node(s).` : 'Nothing pasted: the workflow already has its trigger.');
    },
    async pasteFromClipboard() {
      let clip = copied;
      try {
        clip = (await navigator.clipboard.readText()) || copied;
      } catch {
        // The browser may refuse to read the clipboard without a gesture it trusts: use our own copy.
      }
      if (clip) actions.pasteText(clip);
      else setCanvasNote('Nothing to paste yet: copy nodes first.');
    },
    async copyToClipboard() {
      const clip = actions.copyText();
      if (!clip) return;
      try {
        await navigator.clipboard.writeText(clip);
      } catch {
        // Kept in `copied` for this tab's Paste.
      }
      setCanvasNote(`Copied ${selected.size} node(s) as JSON.`);
    },
    tidy() {
      if (definition) write(withPositions(definition, layoutAll(definition)));
      requestAnimationFrame(() => control.current?.fit());
    },
    connect(from: string, output: string, to: string) {
      if (!definition) return;
      const next = connect(freeze(definition), from, output, to, types.items);
      if (typeof next === 'string') setCanvasNote(next);
      else {
        write(next);
        setCanvasNote(`Connected ${from}${output === 'main' ? '' : ` (${output})`} to ${to}.`);
      }
    },
  };

  // Ctrl+C / Ctrl+V in the canvas use the system clipboard: JSON any workflow (in any tab) can take.
  useEffect(() => {
    const inCanvas = () => frame.current?.contains(document.activeElement) ?? false;
    const onCopy = (event: ClipboardEvent) => {
      if (!inCanvas()) return;
      const clip = actions.copyText();
      if (clip && event.clipboardData) {
        event.clipboardData.setData('text/plain', clip);
        event.preventDefault();
        setCanvasNote(`Copied ${selected.size} node(s) as JSON.`);
      }
    };
    const onPaste = (event: ClipboardEvent) => {
      if (!inCanvas()) return;
      const clip = event.clipboardData?.getData('text/plain');
      if (clip) {
        event.preventDefault();
        actions.pasteText(clip);
      }
    };
    document.addEventListener('copy', onCopy);
    document.addEventListener('paste', onPaste);
    return () => {
      document.removeEventListener('copy', onCopy);
      document.removeEventListener('paste', onPaste);
    };
  });

  const onShortcut = (event: KeyboardEvent): boolean => {
    const mod = event.ctrlKey || event.metaKey;
    if (!mod) return false;
    const key = event.key.toLowerCase();
    if (key === 'z' && !event.shiftKey) history.undo();
    else if ((key === 'z' && event.shiftKey) || key === 'y') history.redo();
    else if (key === 'd') actions.duplicate();
    else if (key === 'a') select(definition?.nodes.map((n) => n.id) ?? []);
    else return false;
    return true;
  };

  /**
   * Sends the draft when it changed, whatever the console's own check found: the server's rules
   * decide, and its refusal lists each field. Only text that is not JSON cannot be sent.
   */
  const saveDraft = async (): Promise<void> => {
    setServerProblems({ problems: [], sent: null });
    setNotice('');
    if (!dirty) return;
    if (check.value === undefined) throw new Error('The definition is not valid JSON, so there is nothing to send: fix the JSON first.');
    try {
      await api('PUT', base, { body: { name, definition: check.value } });
    } catch (error) {
      if (error instanceof ApiError && error.fields.length) {
        setServerProblems({ problems: error.fields, sent: definition });
        // The first node the server names is opened, with its fields marked.
        const first = error.fields.map((p) => placeProblem(p, definition).nodeId).find((n) => n !== undefined);
        if (first) select([first]);
      }
      throw error;
    }
    onSaved();
  };
  const save = useAction(async () => {
    await saveDraft();
    setNotice('Draft saved.');
  });
  const publish = useAction(async () => {
    await saveDraft();
    const version = await api<Version>('POST', `${base}/publish`);
    setNotice(`Published as version ${version.version}: production runs now execute it.`);
    onSaved();
  });

  const problemsOfSelected: ShownProblem[] = placed
    .filter((p) => selectedNode && p.nodeId === selectedNode.id)
    .map((p) => ({ field: p.field, reason: p.reason, nodeId: p.nodeId, advisory: p.advisory }));

  return (
    <>
      <Section title="Definition">
        {/* noValidate: the browser's own checks would stop the save; the server's answer names each field instead. */}
        <form
          class="editor"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void save.run();
          }}
        >
          <label>
            Workflow name
            <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
          </label>
          <div class="tabs" role="tablist" aria-label="Editor">
            {(['canvas', 'json'] as const).map((t) => (
              <button
                key={t}
                type="button"
                role="tab"
                id={`tab-${t}`}
                aria-selected={tab === t}
                aria-controls={`panel-${t}`}
                class={tab === t ? 'tab active' : 'tab'}
                onClick={() => setTab(t)}
              >
                {t === 'canvas' ? 'Canvas' : 'JSON'}
              </button>
            ))}
          </div>
          {tab === 'canvas' ? (
            <div id="panel-canvas" role="tabpanel" aria-labelledby="tab-canvas" class="canvas-editor">
              <div class="toolbar" role="toolbar" aria-label="Canvas actions">
                <button type="button" onClick={() => setCatalogue(!catalogue)} disabled={!canvasEditable} aria-expanded={catalogue}>
                  Add node
                </button>
                <button type="button" class="secondary" onClick={history.undo} disabled={!history.canUndo} title="Ctrl+Z">
                  Undo
                </button>
                <button type="button" class="secondary" onClick={history.redo} disabled={!history.canRedo} title="Ctrl+Shift+Z or Ctrl+Y">
                  Redo
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={actions.duplicate}
                  disabled={!canvasEditable || !selected.size}
                  title="Ctrl+D"
                >
                  Duplicate
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={() => void actions.copyToClipboard()}
                  disabled={!selected.size}
                  title="Ctrl+C"
                >
                  Copy
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={() => void actions.pasteFromClipboard()}
                  disabled={!canvasEditable}
                  title="Ctrl+V"
                >
                  Paste
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={actions.remove}
                  disabled={!canvasEditable || (!selected.size && selectedEdge === null)}
                  title="Delete"
                >
                  Delete
                </button>
                <button type="button" class="secondary" onClick={actions.tidy} disabled={!canvasEditable}>
                  Tidy up
                </button>
              </div>
              {canvasNote && (
                <p class="muted small" role="status">
                  {canvasNote}
                </p>
              )}
              {!definition && <p class="error-text">The JSON does not describe nodes: fix it in the JSON tab to see the canvas.</p>}
              {definition && !canvasEditable && (
                <p class="warning-text">
                  Some nodes or edges in the JSON are malformed: the canvas shows the others and edits nothing until the JSON is fixed.
                </p>
              )}
              {catalogue && (
                <Catalogue
                  types={types.items}
                  hasTrigger={hasTrigger}
                  after={selectedNode ? selectedNode.id : null}
                  onPick={actions.add}
                  onClose={() => setCatalogue(false)}
                />
              )}
              <div class="canvas-layout" ref={frame}>
                <Canvas
                  label={`Workflow ${workflow.name}`}
                  nodes={canvasNodes}
                  edges={canvasEdges}
                  positions={positions}
                  selected={selected}
                  selectedEdge={selectedEdge}
                  editable={canvasEditable}
                  control={control}
                  onSelect={(ids) => select(ids)}
                  onSelectEdge={(index) => {
                    setSelected(new Set());
                    setSelectedEdge(index);
                  }}
                  onMove={(moved) => definition && write(freeze(definition, moved))}
                  onConnect={actions.connect}
                  onDelete={actions.remove}
                  onShortcut={onShortcut}
                />
                <Inspector
                  definition={definition}
                  types={types}
                  selected={selected}
                  selectedNode={selectedNode}
                  selectedType={selectedType}
                  selectedEdge={selectedEdge}
                  canvasEdges={canvasEdges}
                  canvasEditable={canvasEditable}
                  problemsOfSelected={problemsOfSelected}
                  lastRun={lastRun}
                  test={test}
                  write={write}
                  select={select}
                  saveDraft={saveDraft}
                  onConnect={actions.connect}
                  onRemove={actions.remove}
                />
              </div>
            </div>
          ) : (
            <div id="panel-json" role="tabpanel" aria-labelledby="tab-json">
              <JsonEditor value={text} onChange={(next) => history.set(next, 'json')} />
              <p class="muted small">
                The same definition as the canvas, as the server stores it (positions included). Checked against the node types' parameter
                schemas as you type, as advice; the server checks when you save (also expressions, outputs, loops) and its answer is the one
                that counts.
              </p>
            </div>
          )}
          {serverProblems.problems.length > 0 && (
            <ProblemList
              label="Refused by the server"
              role="alert"
              heading={`The server refused the definition at the last save: ${serverProblems.problems.length} problem(s).`}
              problems={placed.filter((p) => !p.advisory)}
              onOpen={(nodeId) => (select([nodeId]), setTab('canvas'))}
            />
          )}
          {check.problems.length > 0 && (
            <ProblemList
              label="Possible problems"
              heading={`The console's own check finds ${check.problems.length} possible problem(s). Saving still sends the definition: the server's check decides.`}
              problems={placed.filter((p) => p.advisory)}
              onOpen={(nodeId) => (select([nodeId]), setTab('canvas'))}
              advisory
            />
          )}
          <div class="actions">
            <button type="submit" disabled={save.busy || !dirty}>
              Save draft
            </button>
            <button type="button" onClick={() => void publish.run()} disabled={publish.busy}>
              {dirty ? 'Save and publish' : 'Publish'}
            </button>
            {dirty && <span class="muted">Unsaved changes</span>}
            {notice && !dirty && (
              <span class="notice" role="status">
                {notice}
              </span>
            )}
          </div>
          {/* A refusal listed field by field above is not repeated here. */}
          <ErrorBox error={serverProblems.problems.length ? null : (save.error ?? publish.error)} />
        </form>
      </Section>
      <RunSection base={base} workflow={workflow} dirty={dirty} saveDraft={saveDraft} />
    </>
  );
}
