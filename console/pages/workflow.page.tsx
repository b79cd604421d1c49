import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, encode, FieldProblem } from '../api-client';
import { TERMINAL, type Accepted, type Definition, type DefinitionView, type NodeSpec, type NodeTest, type NodeType, type NodeTypes, type Page, type Position, type Run, type RunSummary, type Version, type Workflow } from '../api-types';
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
  outputValue,
  parseFragment,
  paste,
  placeProblem,
  positionsOf,
  removeEdge,
  removeNodes,
  renameNode,
  withPinned,
  withPositions,
} from '../canvas/workflow-graph';
import { runEdges, stepStatus } from '../canvas/run-drawing';
import { checkDefinition, ShownProblem } from '../definition-check';
import { ExpressionScopeContext } from '../expressions/expression-editor';
import type { ExpressionScope } from '../expressions/expression-help';
import { NodeForm } from '../node-form';
import { loadNodeTypes, nodeTypeOf } from '../node-types';
import { Link, navigate } from '../router';
import { ErrorBox, JsonBlock, Section, StatusBadge, Time, useAction, useLoad, usePolling } from '../ui';
import { startRun } from '../runs';

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

/** Fields the node form's Settings show beside themselves. */
const SETTINGS_FIELDS = new Set(['onError', 'continueOnError', 'retryOnFail', 'retry', 'maxTries', 'waitBetweenTries', 'backoff']);

/** The server's rule (NODE_ID in workflows.dto.ts): ids are read in expressions as nodes.<id>. */
const NODE_ID = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

export function WorkflowPage({ id }: { id: string }) {
  const base = `/api/v1/workflows/${encode(id)}`;
  const workflow = useLoad(() => api<Workflow>('GET', base), [id]);
  const types = useLoad(loadNodeTypes, []);
  const versions = useLoad(() => api<{ items: Version[] }>('GET', `${base}/versions`), [id]);
  // The latest run's data: what expressions are completed and previewed against.
  const lastRun = useLoad(async () => {
    const page = await api<Page<RunSummary>>('GET', `/api/v1/runs?workflowId=${encode(id)}&limit=1`);
    return page.items[0] ? api<Run>('GET', `/api/v1/runs/${encode(page.items[0].id)}`) : null;
  }, [id]);
  // Kept here: the editor starts afresh from what the server stored after each save.
  const [notice, setNotice] = useState('');
  const kept = useRef<Kept>({ selected: [] });
  // A node test: the run it started, followed until it ends, drawn on the editor's canvas.
  const [testRunId, setTestRunId] = useState<string | null>(null);
  const testRun = useLoad(() => (testRunId ? api<Run>('GET', `/api/v1/runs/${encode(testRunId)}`) : Promise.resolve(null)), [testRunId]);
  usePolling(testRun.reload, 1000, Boolean(testRun.data && !TERMINAL.includes(testRun.data.status)));
  // Here, not in the editor: the draft is saved first, which starts the editor afresh.
  const test = useAction(async (body: NodeTest, saveFirst: () => Promise<void>) => {
    await saveFirst();
    const accepted = await api<Accepted>('POST', `${base}/node-tests`, { body });
    setTestRunId(accepted.runId);
  });

  return (
    <main class="wide">
      <ErrorBox error={workflow.error ?? types.error} />
      <h1>{workflow.data?.name ?? 'Workflow'}</h1>
      {workflow.data && (
        <p class="muted">
          <code>{id}</code> · your role: {workflow.data.role} · active version:{' '}
          {workflow.data.activeVersion ?? 'none (publish to run in production)'} · webhook: <code>POST {workflow.data.webhookPath}</code> ·{' '}
          <Link href={`/runs?workflowId=${encode(id)}`}>runs of this workflow</Link> · <Link href={`/workflows/${encode(id)}/chat`}>chat with it</Link>
        </p>
      )}
      {workflow.data && types.data && (
        <Editor
          key={workflow.data.updatedAt}
          base={base}
          workflow={workflow.data}
          types={types.data}
          lastRun={lastRun.data ?? null}
          notice={notice}
          setNotice={setNotice}
          kept={kept}
          test={{ run: testRun.data ?? null, busy: test.busy, error: test.error ?? testRun.error, start: (body, saveFirst) => void test.run(body, saveFirst), clear: () => setTestRunId(null) }}
          onSaved={() => {
            void workflow.reload();
            void versions.reload();
          }}
        />
      )}
      <Versions
        base={base}
        versions={versions.data?.items}
        error={versions.error}
        onChanged={() => {
          void workflow.reload();
          void versions.reload();
        }}
      />
    </main>
  );
}

/** What outlives the editor when a save starts it afresh. */
interface Kept {
  selected: string[];
}

/** The node test as the page keeps it: its run (drawn on the canvas), and how to start or clear one. */
interface TestState {
  run: Run | null;
  busy: boolean;
  error: unknown;
  start: (body: NodeTest, saveFirst: () => Promise<void>) => void;
  clear: () => void;
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

function Editor({ base, workflow, types, lastRun, notice, setNotice, kept, test, onSaved }: EditorProps) {
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
  const canvasEditable = definition !== null && definition.nodes.length === raw?.nodes?.length && (definition.edges ?? []).length === (raw?.edges?.length ?? 0);
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
      const at = fromAt ? { x: fromAt.x + 260, y: fromAt.y + 20 * (definition.edges ?? []).filter((e) => e.from === from!.id).length } : (control.current?.center() ?? { x: 0, y: 0 });
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
  const scope = useMemo(() => (selectedNode && selectedType && definition ? expressionScope(selectedNode, selectedType, definition, lastRun) : null), [selectedNode, selectedType, definition, lastRun]);

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
                <button type="button" class="secondary" onClick={actions.duplicate} disabled={!canvasEditable || !selected.size} title="Ctrl+D">
                  Duplicate
                </button>
                <button type="button" class="secondary" onClick={() => void actions.copyToClipboard()} disabled={!selected.size} title="Ctrl+C">
                  Copy
                </button>
                <button type="button" class="secondary" onClick={() => void actions.pasteFromClipboard()} disabled={!canvasEditable} title="Ctrl+V">
                  Paste
                </button>
                <button type="button" class="secondary" onClick={actions.remove} disabled={!canvasEditable || (!selected.size && selectedEdge === null)} title="Delete">
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
              {definition && !canvasEditable && <p class="warning-text">Some nodes or edges in the JSON are malformed: the canvas shows the others and edits nothing until the JSON is fixed.</p>}
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
                <aside class="inspector" aria-label="Inspector">
                  {selectedNode && selectedType && definition ? (
                    <>
                      <NodeIdField node={selectedNode} taken={definition.nodes.map((n) => n.id)} onRename={(to) => (write(renameNode(definition, selectedNode.id, to)), select([to]))} />
                      <ExpressionScopeContext.Provider value={scope}>
                        <NodeForm
                          node={selectedNode}
                          nodeType={selectedType}
                          modes={types.parameterModes}
                          problems={problemsOfSelected}
                          onChange={(node) => write({ ...definition, nodes: definition.nodes.map((n) => (n.id === selectedNode.id ? node : n)) }, `form:${node.id}`)}
                        />
                      </ExpressionScopeContext.Provider>
                      <Connections node={selectedNode} definition={definition} onConnect={actions.connect} onRemove={(i) => write(removeEdge(definition, i))} />
                      <NodeTestPanel
                        key={selectedNode.id}
                        node={selectedNode}
                        trigger={selectedType.trigger}
                        pinned={definition.pinnedData?.[selectedNode.id]}
                        lastInput={lastRun ? lastInputOf(selectedNode, definition, lastRun) : undefined}
                        lastRunId={lastRun?.id ?? null}
                        test={test}
                        onPin={(value) => write(withPinned(definition, selectedNode.id, value))}
                        onTest={(body) => test.start(body, saveDraft)}
                      />
                      {problemsOfSelected.filter((p) => !p.field.startsWith('parameters') && !p.field.startsWith('parameterMode') && !SETTINGS_FIELDS.has(p.field)).map((p, i) => (
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
                        <code>{definition.edges[selectedEdge].from}</code> ({canvasEdges[selectedEdge]?.output}) to <code>{definition.edges[selectedEdge].to}</code>
                      </p>
                      <button type="button" class="secondary" onClick={actions.remove} disabled={!canvasEditable}>
                        Delete connection
                      </button>
                    </div>
                  ) : (
                    <div class="muted small">
                      <p>Select a node to edit its parameters ({selected.size > 1 ? `${selected.size} selected` : 'click or Tab to it, then Enter'}).</p>
                      <p>
                        Drag an output port (right edge of a node) onto another node to connect them. Drag the background to pan, the wheel to zoom. Keys on the canvas: arrows pan (on a
                        node: move it), + / - zoom, 0 fits, Delete removes, Ctrl+Z / Ctrl+Y undo and redo, Ctrl+C / Ctrl+V copy and paste as JSON, Ctrl+D duplicates, Ctrl+A selects all.
                      </p>
                    </div>
                  )}
                </aside>
              </div>
            </div>
          ) : (
            <div id="panel-json" role="tabpanel" aria-labelledby="tab-json">
              <JsonEditor value={text} onChange={(next) => history.set(next, 'json')} />
              <p class="muted small">
                The same definition as the canvas, as the server stores it (positions included). Checked against the node types' parameter schemas as you type, as advice; the
                server checks when you save (also expressions, outputs, loops) and its answer is the one that counts.
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

/** What the expressions of `node` read, with the values of the latest run where it has them. */
function expressionScope(node: NodeSpec, type: NodeType, definition: Definition, run: Run | null): ExpressionScope {
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
function lastInputOf(node: NodeSpec, definition: Definition, run: Run): unknown {
  const steps = new Map(run.steps.map((s) => [s.nodeId, s]));
  const input = steps.get(node.id)?.input;
  if (input !== undefined) return input;
  const edge = (definition.edges ?? []).find((e) => e.to === node.id);
  const from = edge && definition.nodes.find((n) => n.id === edge.from);
  return edge && from ? outputValue(steps.get(from.id)?.output, edgeOutput(edge, from, definition.edges ?? []), outputsOf(from, definition.edges)) : undefined;
}

interface NodeTestPanelProps {
  node: NodeSpec;
  trigger: boolean;
  pinned: unknown;
  /** The node's input in the latest run of the workflow, when it has one. */
  lastInput: unknown;
  lastRunId: string | null;
  test: TestState;
  onPin: (value: unknown) => void;
  onTest: (body: NodeTest) => void;
}

/**
 * Runs the selected node of the draft alone (or with what follows) on an input of one's choice,
 * as n8n's partial execution: typed here, else the data pinned on the node, else its input in the
 * latest run. Pinned data is saved with the draft only; the test saves the draft first.
 */
function NodeTestPanel({ node, trigger, pinned, lastInput, lastRunId, test, onPin, onTest }: NodeTestPanelProps) {
  const [typed, setTyped] = useState('');
  const [andAfter, setAndAfter] = useState(false);
  const [problem, setProblem] = useState('');
  const parsed = (): { ok: true; value: unknown } | { ok: false } => {
    try {
      return { ok: true, value: JSON.parse(typed) };
    } catch (error) {
      setProblem(`The input is not valid JSON: ${(error as Error).message}`);
      return { ok: false };
    }
  };
  const pinTyped = () => {
    setProblem('');
    const value = parsed();
    if (value.ok) {
      onPin(value.value);
      setTyped('');
    }
  };
  const start = () => {
    setProblem('');
    const body: NodeTest = { nodeId: node.id, andAfter };
    if (typed.trim()) {
      const value = parsed();
      if (!value.ok) return;
      body.input = value.value as NodeTest['input'];
    } else if (pinned === undefined) {
      if (!lastRunId) {
        setProblem('Nothing to test on yet: type an input, pin data on the node, or run the workflow once.');
        return;
      }
      body.fromRunId = lastRunId;
    }
    onTest(body);
  };
  const run = test.run;
  const step = run?.steps.find((s) => s.nodeId === node.id);
  const source = typed.trim() ? 'the input typed above' : pinned !== undefined ? 'the pinned data' : lastRunId ? `its input in the latest run (${lastRunId})` : null;
  if (trigger) {
    return (
      <fieldset class="node-form test-panel" aria-label={`Test ${node.id}`}>
        <legend>Test</legend>
        <p class="muted small">A trigger's output is the run's input: start a test run below, or test the node after it.</p>
      </fieldset>
    );
  }
  return (
    <fieldset class="node-form test-panel" aria-label={`Test ${node.id}`}>
      <legend>Test this node</legend>
      {pinned !== undefined ? (
        <>
          <div>
            <strong>Pinned data</strong> <span class="muted small">(saved with the draft only, never published)</span>
          </div>
          <JsonBlock label={`Pinned data of ${node.id}`} value={pinned} />
          <button type="button" class="link danger" onClick={() => onPin(undefined)}>
            Unpin
          </button>
        </>
      ) : (
        <p class="muted small">No data pinned: pin an input to test this node on the same data each time.</p>
      )}
      <label>
        Test input (JSON)
        <textarea class="code" rows={3} value={typed} placeholder={pinned !== undefined ? 'empty: the pinned data' : 'e.g. [{"total": 150}]'} onInput={(e) => setTyped(e.currentTarget.value)} />
      </label>
      <div class="actions">
        <button type="button" class="secondary" disabled={!typed.trim()} onClick={pinTyped}>
          Pin this input
        </button>
        <button type="button" class="secondary" disabled={lastInput === undefined} onClick={() => onPin(lastInput)} title={lastInput === undefined ? 'The latest run holds no input for this node' : undefined}>
          Pin the last run's input
        </button>
      </div>
      <label class="check">
        <input type="checkbox" checked={andAfter} onChange={(e) => setAndAfter(e.currentTarget.checked)} />
        and what follows
      </label>
      <div class="actions">
        <button type="button" disabled={test.busy || !source} onClick={start}>
          Test this node
        </button>
        <span class="muted small">{source ? `On ${source}; the draft is saved first.` : 'Type an input or pin data first.'}</span>
      </div>
      {problem && <p class="error-text">{problem}</p>}
      <ErrorBox error={test.error} />
      {run && (
        <div class="test-result" role="region" aria-label="Test result">
          <div>
            Test of <code>{run.nodeTest?.nodeId ?? node.id}</code>
            {run.nodeTest?.andAfter ? ' and what follows' : ''}: <StatusBadge status={run.status} />{' '}
            <Link href={`/runs/${run.id}`}>open the run</Link>{' '}
            <button type="button" class="link" onClick={test.clear}>
              Clear
            </button>
          </div>
          {run.error && <div class="error-text">{run.error.message}</div>}
          {step && step.error && (
            <div class="error-text">
              {step.error.message} <span class="muted">({step.error.code})</span>
            </div>
          )}
          {step && step.output !== undefined && <JsonBlock label={`Test output of ${node.id}`} value={step.output} />}
        </div>
      )}
    </fieldset>
  );
}

function NodeIdField({ node, taken, onRename }: { node: NodeSpec; taken: string[]; onRename: (id: string) => void }) {
  const [value, setValue] = useState(node.id);
  useEffect(() => setValue(node.id), [node.id]);
  const problem = value === node.id ? '' : !NODE_ID.test(value) ? 'must start with a letter or _ and hold at most 64 letters, digits, _ or -' : taken.includes(value) ? 'is taken by another node' : '';
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
      {problem ? <div class="error-text">{problem}</div> : <div class="hint">Expressions read this node's output as nodes.{node.id}; renaming updates the edges, not expressions.</div>}
    </div>
  );
}

/** The node's edges, in and out, with a way to add one per output by keyboard (the canvas drags them). */
function Connections({ node, definition, onConnect, onRemove }: { node: NodeSpec; definition: Definition; onConnect: (from: string, output: string, to: string) => void; onRemove: (index: number) => void }) {
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
            {edges.filter((e) => e.from === node.id && edgeOutput(e, node, edges) === output).length === 0 && <span class="muted">nothing yet</span>}
          </div>
          <ul class="plain">
            {edges.map((e, i) =>
              e.from === node.id && edgeOutput(e, node, edges) === output ? (
                <li key={i}>
                  <code>{e.to}</code>{' '}
                  <button type="button" class="link danger" onClick={() => onRemove(i)} aria-label={`Remove the connection to ${e.to} (${output})`}>
                    Remove
                  </button>
                </li>
              ) : null,
            )}
          </ul>
          <div class="inline">
            <select aria-label={`Connect ${output} to`} value={targets[output] ?? ''} onChange={(e) => setTargets({ ...targets, [output]: e.currentTarget.value })}>
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
          </div>
        </div>
      ))}
    </fieldset>
  );
}

/** The JSON with line numbers beside it (the server's problems name lines in expressions, people name them in the text). */
function JsonEditor({ value, onChange }: { value: string; onChange: (value: string) => void }) {
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

function RunSection({ base, workflow, dirty, saveDraft }: { base: string; workflow: Workflow; dirty: boolean; saveDraft: () => Promise<void> }) {
  const [input, setInput] = useState('{}');
  const start = useAction(async (runType: 'test' | 'production') => {
    let parsed: unknown;
    try {
      parsed = input.trim() ? JSON.parse(input) : undefined;
    } catch (error) {
      throw new Error(`The run input is not valid JSON: ${(error as Error).message}`);
    }
    if (runType === 'test') await saveDraft();
    const accepted: Accepted = await startRun(base, runType, parsed);
    navigate(`/runs/${accepted.runId}`);
  });
  return (
    <Section title="Run">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void start.run('test');
        }}
      >
        <label>
          Run input (JSON)
          <textarea class="code" rows={4} value={input} onInput={(e) => setInput(e.currentTarget.value)} />
        </label>
        <p class="muted small">
          The input becomes the trigger's output. A test run executes the draft (saved first if changed); a production run executes the published version in force
          {workflow.activeVersion !== null ? ` (version ${workflow.activeVersion})` : ''}, as a webhook call would.
        </p>
        <div class="actions">
          <button type="submit" disabled={start.busy}>
            Start test run
          </button>
          <button type="button" disabled={start.busy || workflow.activeVersion === null} onClick={() => void start.run('production')}>
            Run published version
          </button>
          {workflow.activeVersion === null && <span class="muted small">Publish first to run in production.</span>}
          {workflow.activeVersion !== null && dirty && <span class="muted small">Unsaved changes are not part of the published version.</span>}
        </div>
        <ErrorBox error={start.error} />
      </form>
    </Section>
  );
}

interface ProblemListProps {
  label: string;
  heading: string;
  problems: readonly { nodeId?: string; field: string; reason: string; original: FieldProblem }[];
  role?: 'alert';
  advisory?: boolean;
  onOpen: (nodeId: string) => void;
}

/** Problems grouped by node, each field relative to its node; a node's name opens it on the canvas. */
function ProblemList({ label, heading, problems, role, advisory, onOpen }: ProblemListProps) {
  const groups = new Map<string, typeof problems[number][]>();
  for (const p of problems) groups.set(p.nodeId ?? '', [...(groups.get(p.nodeId ?? '') ?? []), p]);
  return (
    <section class={advisory ? 'problems advisory' : 'problems'} role={role} aria-label={label}>
      <strong>{heading}</strong>
      {[...groups].map(([nodeId, list]) => (
        <div key={nodeId}>
          <div>
            {nodeId ? (
              <>
                Node{' '}
                <button type="button" class="link" onClick={() => onOpen(nodeId)}>
                  <code>{nodeId}</code>
                </button>
              </>
            ) : (
              'Workflow'
            )}
          </div>
          <ul class="fields">
            {list.map((p, i) => (
              <li key={i}>
                <code>{nodeId ? p.field || '(node)' : p.original.field}</code> {p.reason}
              </li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}

function Versions({ base, versions, error, onChanged }: { base: string; versions?: Version[]; error: unknown; onChanged: () => void }) {
  const [shown, setShown] = useState<Version | null>(null);
  const activate = useAction(async (version: number) => {
    await api('POST', `${base}/versions/${version}/activate`);
    onChanged();
  });
  const show = useAction(async (version: number) => {
    setShown(shown?.version === version ? null : await api<Version>('GET', `${base}/versions/${version}`));
  });
  return (
    <Section title="Versions">
      <ErrorBox error={error ?? activate.error ?? show.error} />
      {versions && versions.length === 0 && <p class="muted">Nothing published yet.</p>}
      {versions && versions.length > 0 && (
        <div class="table-scroll">
          <table aria-label="Versions">
            <thead>
              <tr>
                <th>Version</th>
                <th>Published</th>
                <th>By</th>
                <th>State</th>
                <th>
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <tr key={v.id}>
                  <td>{v.version}</td>
                  <td>
                    <Time iso={v.createdAt} />
                  </td>
                  <td>
                    <code>{v.createdBy}</code>
                  </td>
                  <td>{v.active ? <StatusBadge status="active" /> : <span class="muted">inactive</span>}</td>
                  <td class="row-actions">
                    <button type="button" class="link" onClick={() => void show.run(v.version)}>
                      {shown?.version === v.version ? 'Hide' : 'Show'} definition
                    </button>
                    {!v.active && (
                      <button type="button" class="link" disabled={activate.busy} onClick={() => void activate.run(v.version)} aria-label={`Activate version ${v.version}`}>
                        Activate
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {shown && <JsonBlock label={`Definition of version ${shown.version}`} value={shown.definition} />}
    </Section>
  );
}
