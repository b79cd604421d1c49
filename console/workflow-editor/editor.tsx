import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api-client';
import type { Accepted, Definition, DefinitionView, NodeTest, NodeTypes, Version, Workflow } from '../api-types';
import { Canvas, type CanvasContext, type CanvasControl, type CanvasEdge, type CanvasNode } from '../canvas/canvas';
import { Catalogue } from '../canvas/catalogue';
import { useHistory } from '../canvas/history';
import { drawable, drawNodes, edgeOutput, placeProblem, positionsOf } from '../canvas/workflow-graph';
import { checkDefinition } from '../definition-check';
import { nodeTypeOf } from '../node-types';
import { useLeaveGuard } from '../router';
import { startRun } from '../runs';
import { ErrorBox, useAction } from '../ui';
import { CanvasField, ContextMenu } from './canvas-overlays';
import { editorActions, useCanvasClipboard, type AddTarget, type Selection } from './editor-actions';
import { CanvasBar } from './editor-toolbar';
import { Inspector, JsonEditor } from './inspector';
import { NodeView } from './node-view';
import { placeProblems, type Refusal } from './problems';
import { liveDrawing, type RunData } from './run-data';
import { menuFor, NodeToolbar } from './canvas-menus';
import { ProblemList, RunSection } from './sections';
import { SettingsSection } from './settings-form';
import { Versions } from './versions';

/** The definition as the editor shows it: what PUT takes back (a secret's `set` flag is view-only). */
function editable(definition: DefinitionView): string {
  const variables = (definition.variables ?? []).map(({ name, type, value }) => ({ name, type, value }));
  // Pinned data and notes are shown, and sent back, only when there are some.
  const pinned = definition.pinnedData && Object.keys(definition.pinnedData).length ? { pinnedData: definition.pinnedData } : {};
  const notes = definition.notes?.length ? { notes: definition.notes } : {};
  return JSON.stringify({ nodes: definition.nodes, edges: definition.edges ?? [], variables, ...pinned, ...notes }, null, 2);
}

/** What outlives the editor when a save starts it afresh. */
export interface Kept {
  selected: string[];
}

interface EditorProps {
  base: string;
  workflow: Workflow;
  types: NodeTypes;
  versions: Version[] | undefined;
  versionsError: unknown;
  notice: string;
  setNotice: (notice: string) => void;
  kept: { current: Kept };
  /** The workflow's runs: the one drawn on the canvas, and each node's latest data. */
  runs: RunData;
  onSaved: () => void;
}

export function Editor({ base, workflow, types, versions, versionsError, notice, setNotice, kept, runs, onSaved }: EditorProps) {
  const [name, setName] = useState(workflow.name);
  const history = useHistory(editable(workflow.definition));
  const text = history.value;
  const [tab, setTab] = useState<'canvas' | 'json'>('canvas');
  const [selection, setSelection] = useState<Selection>(() => ({ nodes: new Set(kept.current.selected), edge: null, note: null }));
  // Read by key handlers that may run before the next render (Ctrl+C in the frame of the click).
  const selectionRef = useRef(selection);
  const [catalogue, setCatalogue] = useState<AddTarget | null>(null);
  const [refusal, setRefusal] = useState<Refusal>({ problems: [], sent: null });
  const [canvasNote, setCanvasNote] = useState('');
  const [menu, setMenu] = useState<CanvasContext | null>(null);
  const [renaming, setRenaming] = useState<string | null>(null);
  const [writingNote, setWritingNote] = useState<string | null>(null);
  const [nodeView, setNodeView] = useState<string | null>(null);
  const [full, setFull] = useState(false);
  const [runInput, setRunInput] = useState('{}');
  const control = useRef<CanvasControl | null>(null);
  const canvasBox = useRef<HTMLDivElement>(null);

  const saved = useMemo(() => editable(workflow.definition), [workflow]);
  const dirty = text !== saved || name !== workflow.name;
  useLeaveGuard(() => (dirty ? 'This workflow has unsaved changes: leave and lose them?' : null));
  const check = useMemo(() => checkDefinition(text, types.items, types.parameterModes), [text, types]);
  /** The definition as the canvas draws it; editable there only when every node and edge is well formed. */
  const definition = useMemo(() => drawable(check.value), [check]);
  const raw = check.value as { nodes?: unknown[]; edges?: unknown[] } | undefined;
  const canvasEditable =
    definition !== null && definition.nodes.length === raw?.nodes?.length && (definition.edges ?? []).length === (raw?.edges?.length ?? 0);
  const positions = useMemo(() => (definition ? positionsOf(definition) : new Map()), [definition]);
  const selected = selection.nodes;
  const only = selected.size === 1 ? [...selected][0] : null;
  useEffect(() => runs.want(nodeView ?? only), [nodeView ?? only]);
  const shown = runs.shown;

  const write = (next: Definition, group?: string) => history.set(JSON.stringify(next, null, 2), group);
  const select = (ids: string[]) => {
    kept.current.selected = ids;
    selectionRef.current = { nodes: new Set(ids), edge: null, note: null };
    setSelection(selectionRef.current);
  };
  const selectOther = (change: Partial<Selection>) => {
    selectionRef.current = { nodes: new Set(), edge: null, note: null, ...change };
    setSelection(selectionRef.current);
  };
  const showRun = runs.show;
  const actions = editorActions({
    definition,
    positions,
    types: types.items,
    selection: selectionRef,
    control,
    write,
    select,
    selectNote: (note) => selectOther({ note }),
    say: setCanvasNote,
  });

  const placed = useMemo(() => placeProblems(refusal, check.problems, definition), [refusal, check, definition]);
  const drawing = useMemo(() => (definition && shown ? liveDrawing(definition, shown) : null), [definition, shown]);
  const canvasNodes = useMemo<CanvasNode[]>(
    () =>
      definition
        ? drawNodes(definition, types.items).map((n) => ({
            ...n,
            status: drawing?.status.get(n.id),
            pinned: definition.pinnedData?.[n.id] !== undefined,
            errors: placed.filter((p) => p.nodeId === n.id && !p.advisory).length,
            warnings: placed.filter((p) => p.nodeId === n.id && p.advisory).length,
          }))
        : [],
    [definition, placed, types, drawing],
  );
  const canvasEdges = useMemo<CanvasEdge[]>(() => {
    if (!definition) return [];
    const edges = definition.edges ?? [];
    const byId = new Map(definition.nodes.map((n) => [n.id, n]));
    return edges.map((edge, index) => ({
      index,
      from: edge.from,
      to: edge.to,
      output: edgeOutput(edge, byId.get(edge.from), edges),
      invalid: placed.some((p) => p.edgeIndex === index),
      ...(drawing?.edges[index]?.status ? { label: drawing.edges[index].label, status: drawing.edges[index].status } : {}),
    }));
  }, [definition, placed, drawing]);

  const selectedNode = definition?.nodes.find((n) => n.id === only);
  const selectedType = selectedNode ? nodeTypeOf(types.items, selectedNode.type, selectedNode.version) : undefined;
  const viewed = definition?.nodes.find((n) => n.id === nodeView);
  const viewedType = viewed ? nodeTypeOf(types.items, viewed.type, viewed.version) : undefined;
  const hasTrigger = definition?.nodes.some((n) => nodeTypeOf(types.items, n.type)?.trigger) ?? false;

  useCanvasClipboard(canvasBox, actions, () => selectionRef.current.nodes.size, setCanvasNote);

  const onShortcut = (event: KeyboardEvent): boolean => {
    const key = event.key.toLowerCase();
    const onNode = (event.target as Element).closest('[data-node-id]');
    if (!(event.ctrlKey || event.metaKey)) {
      if (key === 'n' && canvasEditable) setCatalogue(actions.defaultTarget());
      else if (key === 'd' && onNode && canvasEditable) actions.setDisabled(selectionRef.current.nodes, !selectedNode?.disabled);
      else return false;
      return true;
    }
    if (key === 'z' && !event.shiftKey) history.undo();
    else if ((key === 'z' && event.shiftKey) || key === 'y') history.redo();
    else if (key === 'd') actions.duplicate();
    else if (key === 'a') actions.selectAll();
    else return false;
    return true;
  };

  /**
   * Sends the draft when it changed, whatever the console's own check found: the server's rules
   * decide, and its refusal lists each field. Only text that is not JSON cannot be sent. Throws on
   * a refusal, so nothing that runs the draft starts on what could not be saved.
   */
  const saveDraft = async (): Promise<void> => {
    setNotice('');
    if (!dirty) return;
    if (check.value === undefined) throw new Error('The definition is not valid JSON, so there is nothing to send: fix the JSON first.');
    try {
      await api('PUT', base, { body: { name, definition: check.value } });
    } catch (error) {
      if (error instanceof ApiError && error.fields.length) {
        setRefusal({ problems: error.fields, sent: definition });
        // The first node the server names is opened, with its fields marked.
        const first = error.fields.map((p) => placeProblem(p, definition).nodeId).find((n) => n !== undefined);
        if (first) select([first]);
      }
      throw error;
    }
    setRefusal({ problems: [], sent: null });
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
  const run = useAction(async (runType: 'test' | 'production') => {
    let parsed: unknown;
    try {
      parsed = runInput.trim() ? JSON.parse(runInput) : undefined;
    } catch (error) {
      throw new Error(`The run input is not valid JSON: ${(error as Error).message}`);
    }
    if (runType === 'test') await saveDraft();
    const accepted: Accepted = await startRun(base, runType, parsed);
    showRun(accepted.runId);
    setCanvasNote(
      `${runType === 'test' ? 'Test run' : 'Production run'} ${accepted.runId} started: drawn on the canvas as its steps land.`,
    );
  });
  const nodeTest = useAction(async (body: NodeTest) => {
    await saveDraft();
    const accepted = await api<Accepted>('POST', `${base}/node-tests`, { body });
    showRun(accepted.runId);
  });
  const test = {
    run: shown?.nodeTest ? shown : null,
    busy: nodeTest.busy,
    error: nodeTest.error ?? (shown?.nodeTest ? runs.shownError : null),
    start: (body: NodeTest) => void nodeTest.run(body),
    clear: () => showRun(null),
    from: (id: string) => runs.runFor(id)?.id ?? runs.latestId,
  };

  const openCatalogue = (target: AddTarget) => {
    setMenu(null);
    setCatalogue(target);
  };
  const menuItems =
    menu && definition
      ? menuFor(menu, {
          definition,
          actions,
          selected: selectionRef,
          canvasEditable,
          openCatalogue,
          setRenaming,
          setWritingNote,
          setNodeView,
          test,
        })
      : [];
  const renamed = definition?.nodes.find((n) => n.id === renaming);
  const note = definition?.notes?.find((n) => n.id === writingNote);

  return (
    <section class={`wf-editor${full ? ' full' : ''}`} aria-label="Definition">
      {/* noValidate: the browser's own checks would stop the save; the server's answer names each field instead. */}
      <form
        class="editor"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <div class="wf-bar" role="toolbar" aria-label="Workflow">
          <label class="compact wf-name">
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
          <button type="submit" disabled={save.busy || !dirty}>
            Save draft
          </button>
          <button type="button" onClick={() => void publish.run()} disabled={publish.busy}>
            {dirty ? 'Save and publish' : 'Publish'}
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => void run.run('test')}
            disabled={run.busy}
            title="Saves the draft, then runs it"
          >
            Test workflow
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => void run.run('production')}
            disabled={run.busy || workflow.activeVersion === null}
          >
            Run published
          </button>
          <button type="button" class="secondary" aria-pressed={full} onClick={() => setFull(!full)}>
            {full ? 'Exit full screen' : 'Full screen'}
          </button>
          {dirty && <span class="muted">Unsaved changes</span>}
          {notice && !dirty && (
            <span class="notice" role="status">
              {notice}
            </span>
          )}
        </div>
        {tab === 'canvas' ? (
          <div id="panel-canvas" role="tabpanel" aria-labelledby="tab-canvas" class="canvas-editor">
            <CanvasBar
              canvasEditable={canvasEditable}
              selectedCount={selected.size}
              hasEdgeOrNote={selection.edge !== null || selection.note !== null}
              canUndo={history.canUndo}
              canRedo={history.canRedo}
              catalogueOpen={catalogue !== null}
              control={control}
              actions={actions}
              undo={history.undo}
              redo={history.redo}
              onAdd={() => setCatalogue(catalogue ? null : actions.defaultTarget())}
              recent={runs.recent}
              shownRunId={shown?.id ?? null}
              onShowRun={showRun}
            />
            {canvasNote && (
              <p class="muted small canvas-note-line" role="status">
                {canvasNote}
              </p>
            )}
            <ErrorBox error={run.error} />
            {!definition && <p class="error-text">The JSON does not describe nodes: fix it in the JSON tab to see the canvas.</p>}
            {definition && !canvasEditable && (
              <p class="warning-text">
                Some nodes or edges in the JSON are malformed: the canvas shows the others and edits nothing until the JSON is fixed.
              </p>
            )}
            {catalogue && (
              <Catalogue
                types={types.items}
                hasTrigger={hasTrigger || catalogue.kind === 'edge'}
                after={
                  catalogue.kind === 'after'
                    ? `${catalogue.from}${catalogue.output === 'main' ? '' : ` (${catalogue.output})`}`
                    : catalogue.kind === 'edge'
                      ? `the connection ${definition?.edges?.[catalogue.index]?.from} → ${definition?.edges?.[catalogue.index]?.to}`
                      : null
                }
                onPick={(type) => {
                  actions.add(type, catalogue);
                  setCatalogue(null);
                }}
                onClose={() => setCatalogue(null)}
              />
            )}
            <div class="canvas-layout" ref={canvasBox}>
              <Canvas
                label={`Workflow ${workflow.name}`}
                nodes={canvasNodes}
                edges={canvasEdges}
                notes={definition?.notes ?? []}
                positions={positions}
                selected={selected}
                selectedEdge={selection.edge}
                selectedNote={selection.note}
                editable={canvasEditable}
                control={control}
                onSelect={(ids) => select(ids)}
                onSelectEdge={(edge) => selectOther({ edge })}
                onSelectNote={(note) => note !== selection.note && selectOther({ note })}
                onMove={actions.move}
                onMoveNote={(id, position, size) => actions.updateNote(id, { position, ...size })}
                onEditNote={setWritingNote}
                onConnect={actions.connect}
                onAddAfter={(from, output, at) => openCatalogue({ kind: 'after', from, output, at })}
                onInsertOnEdge={(index) => openCatalogue({ kind: 'edge', index })}
                onContextMenu={setMenu}
                onDelete={actions.remove}
                onShortcut={onShortcut}
                onOpen={setNodeView}
                onRename={setRenaming}
                nodeToolbar={(id) => (
                  <NodeToolbar id={id} definition={definition} actions={actions} test={test} onOpen={setNodeView} onRename={setRenaming} />
                )}
              >
                {menu && menuItems.length > 0 && (
                  <ContextMenu
                    items={menuItems}
                    at={menu.client}
                    label={menu.nodeId ? `Node ${menu.nodeId}` : 'Canvas'}
                    onClose={() => setMenu(null)}
                  />
                )}
                {renamed && (
                  <CanvasField
                    label={`Name of ${renamed.id}`}
                    initial={renamed.name ?? ''}
                    hint={`Shown on the canvas; expressions keep reading nodes.${renamed.id}.`}
                    onDone={(value) => {
                      if (value !== null) actions.rename(renamed.id, value);
                      setRenaming(null);
                    }}
                  />
                )}
                {note && (
                  <CanvasField
                    label="Sticky note text"
                    initial={note.text}
                    multiline
                    hint="Ctrl+Enter keeps it."
                    onDone={(value) => {
                      if (value !== null) actions.updateNote(note.id, { text: value });
                      setWritingNote(null);
                    }}
                  />
                )}
              </Canvas>
              <Inspector
                definition={definition}
                types={types}
                selected={selected}
                selectedNode={nodeView ? undefined : selectedNode}
                selectedType={selectedType}
                selectedEdge={selection.edge}
                canvasEdges={canvasEdges}
                canvasEditable={canvasEditable}
                problems={placed}
                run={runs.runFor(only)}
                latestRunId={runs.latestId}
                test={test}
                write={write}
                select={select}
                onConnect={actions.connect}
                onRemove={actions.remove}
                onOpen={setNodeView}
                onAddAfter={(from, output) => openCatalogue({ kind: 'after', from, output, at: null })}
              />
            </div>
          </div>
        ) : (
          <div id="panel-json" role="tabpanel" aria-labelledby="tab-json">
            <JsonEditor value={text} onChange={(next) => history.set(next, 'json')} />
            <p class="muted small">
              The same definition as the canvas, as the server stores it (positions and notes included). Checked against the node types'
              parameter schemas as you type, as advice; the server checks when you save (also expressions, outputs, loops) and its answer is
              the one that counts.
            </p>
          </div>
        )}
        <ProblemList problems={placed} onOpen={(nodeId) => (select([nodeId]), setTab('canvas'))} />
        {/* A refusal listed field by field above is not repeated here. */}
        <ErrorBox error={refusal.problems.length ? null : (save.error ?? publish.error)} />
      </form>
      {viewed && viewedType && definition && (
        <NodeView
          node={viewed}
          nodeType={viewedType}
          types={types}
          definition={definition}
          run={runs.runFor(viewed.id)}
          problems={placed
            .filter((p) => p.nodeId === viewed.id)
            .map((p) => ({ field: p.field, reason: p.reason, nodeId: p.nodeId, advisory: p.advisory }))}
          onChange={(node) =>
            write({ ...definition, nodes: definition.nodes.map((n) => (n.id === viewed.id ? node : n)) }, `form:${node.id}`)
          }
          onClose={() => setNodeView(null)}
        />
      )}
      <RunSection
        workflow={workflow}
        dirty={dirty}
        input={runInput}
        setInput={setRunInput}
        busy={run.busy}
        start={(runType) => void run.run(runType)}
        shown={shown}
      />
      <SettingsSection base={base} workflow={workflow} definition={definition} write={write} setNotice={setNotice} onSaved={onSaved} />
      <Versions
        base={base}
        versions={versions}
        error={versionsError}
        draft={definition}
        onRestore={(restored, version) => {
          write({ ...restored, ...(definition?.pinnedData ? { pinnedData: definition.pinnedData } : {}) });
          setTab('canvas');
          setNotice('');
          setCanvasNote(`Version ${version} restored into the draft: save it to keep it.`);
        }}
        onChanged={onSaved}
      />
    </section>
  );
}
