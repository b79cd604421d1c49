import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, encode, FieldProblem } from '../api-client';
import type { Accepted, Definition, NodeSpec, NodeTypes, Version, Workflow } from '../api-types';
import { checkDefinition, problemsByNode, ShownProblem } from '../definition-check';
import { isObject } from '../json-schema';
import { NodeForm } from '../node-form';
import { loadNodeTypes, nodeTypeOf } from '../node-types';
import { Link, navigate } from '../router';
import { ErrorBox, JsonBlock, Section, StatusBadge, Time, useAction, useLoad } from '../ui';

/** The definition as the editor shows it: what PUT takes back (a secret's `set` flag is view-only). */
function editable(definition: Definition): string {
  const variables = (definition.variables ?? []).map(({ name, type, value }) => ({ name, type, value }));
  return JSON.stringify({ nodes: definition.nodes, edges: definition.edges ?? [], variables }, null, 2);
}

export function WorkflowPage({ id }: { id: string }) {
  const base = `/api/v1/workflows/${encode(id)}`;
  const workflow = useLoad(() => api<Workflow>('GET', base), [id]);
  const types = useLoad(loadNodeTypes, []);
  const versions = useLoad(() => api<{ items: Version[] }>('GET', `${base}/versions`), [id]);
  // Kept here: the editor starts afresh from what the server stored after each save.
  const [notice, setNotice] = useState('');

  return (
    <main>
      <ErrorBox error={workflow.error ?? types.error} />
      <h1>{workflow.data?.name ?? 'Workflow'}</h1>
      {workflow.data && (
        <p class="muted">
          <code>{id}</code> · your role: {workflow.data.role} · active version:{' '}
          {workflow.data.activeVersion ?? 'none (publish to run in production)'} · webhook: <code>POST {workflow.data.webhookPath}</code> ·{' '}
          <Link href={`/runs?workflowId=${encode(id)}`}>runs of this workflow</Link>
        </p>
      )}
      {workflow.data && types.data && (
        <Editor
          key={workflow.data.updatedAt}
          base={base}
          workflow={workflow.data}
          types={types.data}
          notice={notice}
          setNotice={setNotice}
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

interface EditorProps {
  base: string;
  workflow: Workflow;
  types: NodeTypes;
  notice: string;
  setNotice: (notice: string) => void;
  onSaved: () => void;
}

function Editor({ base, workflow, types, notice, setNotice, onSaved }: EditorProps) {
  const [name, setName] = useState(workflow.name);
  const [text, setText] = useState(() => editable(workflow.definition));
  const [selected, setSelected] = useState<string>(workflow.definition.nodes[1]?.id ?? workflow.definition.nodes[0]?.id ?? '');
  const [serverProblems, setServerProblems] = useState<FieldProblem[]>([]);
  const [testInput, setTestInput] = useState('{}');
  const saved = useMemo(() => editable(workflow.definition), [workflow]);
  const dirty = text !== saved || name !== workflow.name;
  const check = useMemo(() => checkDefinition(text, types.items, types.parameterModes), [text, types]);

  // The parsed definition, even when it has problems: the form edits it as long as the JSON parses.
  const parsed = isObject(check.value) && Array.isArray(check.value.nodes) ? (check.value as unknown as Definition) : null;
  const nodes = parsed?.nodes.filter((n): n is NodeSpec => isObject(n) && typeof n.id === 'string') ?? [];
  const selectedIndex = parsed?.nodes.findIndex((n) => isObject(n) && n.id === selected) ?? -1;
  const selectedNode = selectedIndex >= 0 ? parsed!.nodes[selectedIndex] : undefined;
  const selectedType = selectedNode ? nodeTypeOf(types.items, selectedNode.type, selectedNode.version) : undefined;
  useEffect(() => {
    if (!selectedNode && nodes.length) setSelected(nodes[0].id);
  }, [selectedNode, nodes.length]);

  const write = (definition: Definition) => setText(JSON.stringify(definition, null, 2));
  const replaceNode = (index: number, node: NodeSpec) => {
    if (!parsed) return;
    write({ ...parsed, nodes: parsed.nodes.map((n, i) => (i === index ? node : n)) });
  };

  /**
   * Sends the draft when it changed, whatever the console's own check found: the server's rules
   * decide, and its refusal lists each field. Only text that is not JSON cannot be sent.
   */
  const saveDraft = async (): Promise<void> => {
    setServerProblems([]);
    setNotice('');
    if (!dirty) return;
    if (check.value === undefined) throw new Error('The definition is not valid JSON, so there is nothing to send: fix the JSON first.');
    try {
      await api('PUT', base, { body: { name, definition: check.value } });
    } catch (error) {
      if (error instanceof ApiError) setServerProblems(error.fields);
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
  const testRun = useAction(async () => {
    let input: unknown;
    try {
      input = testInput.trim() ? JSON.parse(testInput) : undefined;
    } catch (error) {
      throw new Error(`Test input is not valid JSON: ${(error as Error).message}`);
    }
    await saveDraft();
    const accepted = await api<Accepted>('POST', `${base}/runs`, { body: { runType: 'test', ...(input !== undefined ? { input } : {}) } });
    navigate(`/runs/${accepted.runId}`);
  });

  const [newType, setNewType] = useState('');
  const addNode = () => {
    const nodeType = nodeTypeOf(types.items, newType);
    if (!parsed || !nodeType) return;
    const taken = new Set(parsed.nodes.map((n) => n.id));
    const stem = nodeType.type.replace(/[^A-Za-z0-9_]/g, '_');
    let id = stem;
    for (let i = 2; taken.has(id); i++) id = `${stem}_${i}`;
    const after = selectedNode && !nodeType.trigger ? [{ from: selectedNode.id, to: id }] : [];
    write({ ...parsed, nodes: [...parsed.nodes, { id, type: nodeType.type, parameters: {} }], edges: [...(parsed.edges ?? []), ...after] });
    setSelected(id);
  };

  // The server's refusal first: it is the one that counts.
  const grouped = problemsByNode<ShownProblem>([...serverProblems, ...check.problems.map((p) => ({ ...p, advisory: true }))]);

  return (
    <>
      <Section title="Definition">
        <form
          class="editor"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run();
          }}
        >
          <label>
            Workflow name
            <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
          </label>
          <div class="editor-columns">
            <div class="editor-json">
              <label>
                Definition (JSON)
                <textarea class="code" rows={24} spellcheck={false} value={text} onInput={(e) => setText(e.currentTarget.value)} />
              </label>
              <p class="muted small">
                Checked against the node types' parameter schemas as you type, as advice; the server checks when you save (also expressions,
                outputs, loops) and its answer is the one that counts.
              </p>
            </div>
            <div class="editor-form">
              {parsed ? (
                <>
                  <div class="inline">
                    <label>
                      Node
                      <select aria-label="Node" value={selected} onChange={(e) => setSelected(e.currentTarget.value)}>
                        {nodes.map((n) => (
                          <option key={n.id} value={n.id}>
                            {n.id} ({n.type})
                          </option>
                        ))}
                      </select>
                    </label>
                  </div>
                  {selectedNode && selectedType && (
                    <NodeForm
                      node={selectedNode}
                      nodeType={selectedType}
                      modes={types.parameterModes}
                      problems={(grouped.get(selectedNode.id) ?? []).map((p) => ({ ...p, field: relativeField(p.field) }))}
                      onChange={(node) => replaceNode(selectedIndex, node)}
                    />
                  )}
                  {selectedNode && !selectedType && <p class="error-text">Unknown node type {selectedNode.type}: fix it in the JSON.</p>}
                  <div class="inline">
                    <label>
                      Node type to add
                      <select aria-label="Node type to add" value={newType} onChange={(e) => setNewType(e.currentTarget.value)}>
                        <option value="">(choose)</option>
                        {types.items
                          .filter((t) => !t.trigger)
                          .map((t) => (
                            <option key={`${t.type}@${t.version}`} value={t.type} title={t.description}>
                              {t.displayName} ({t.type})
                            </option>
                          ))}
                      </select>
                    </label>
                    <button type="button" disabled={!newType} onClick={addNode}>
                      Add node{selectedNode ? ` after ${selectedNode.id}` : ''}
                    </button>
                  </div>
                </>
              ) : (
                <p class="muted">Fix the JSON to edit the nodes with the form.</p>
              )}
            </div>
          </div>
          {serverProblems.length > 0 && (
            <ProblemList
              label="Refused by the server"
              role="alert"
              heading={`The server refused the definition at the last save: ${serverProblems.length} problem(s).`}
              problems={serverProblems}
            />
          )}
          {check.problems.length > 0 && (
            <ProblemList
              label="Possible problems"
              heading={`The console's own check finds ${check.problems.length} possible problem(s). Saving still sends the definition: the server's check decides.`}
              problems={check.problems}
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
            {notice && !dirty && <span class="notice" role="status">{notice}</span>}
          </div>
          {/* A refusal listed field by field above is not repeated here. */}
          <ErrorBox error={serverProblems.length ? null : (save.error ?? publish.error)} />
        </form>
      </Section>
      <Section title="Test run">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void testRun.run();
          }}
        >
          <label>
            Test input (JSON)
            <textarea class="code" rows={4} value={testInput} onInput={(e) => setTestInput(e.currentTarget.value)} />
          </label>
          <p class="muted small">A test run executes the draft (saved first if changed); its input becomes the trigger's output.</p>
          <button type="submit" disabled={testRun.busy}>
            Start test run
          </button>
          <ErrorBox error={testRun.error} />
        </form>
      </Section>
    </>
  );
}

interface ProblemListProps {
  label: string;
  heading: string;
  problems: readonly ShownProblem[];
  role?: 'alert';
  advisory?: boolean;
}

/** `nodes[1].parameters.url` -> `parameters.url`: the field within its node. */
const relativeField = (field: string) => field.replace(/^nodes\[\d+\]\.?/, '');

/** Problems grouped by node, each field relative to its node. */
function ProblemList({ label, heading, problems, role, advisory }: ProblemListProps) {
  return (
    <section class={advisory ? 'problems advisory' : 'problems'} role={role} aria-label={label}>
      <strong>{heading}</strong>
      {[...problemsByNode(problems)].map(([nodeId, list]) => (
        <div key={nodeId}>
          <div>{nodeId ? <>Node <code>{nodeId}</code></> : 'Workflow'}</div>
          <ul class="fields">
            {list.map((p, i) => (
              <li key={i}>
                <code>{nodeId ? relativeField(p.field) || '(node)' : p.field}</code> {p.reason}
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
        <table aria-label="Versions">
          <thead>
            <tr>
              <th>Version</th>
              <th>Published</th>
              <th>By</th>
              <th>State</th>
              <th />
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
      )}
      {shown && <JsonBlock label={`Definition of version ${shown.version}`} value={shown.definition} />}
    </Section>
  );
}
