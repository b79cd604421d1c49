import { useState } from 'preact/hooks';
import { api } from '../api-client';
import type { Definition, DefinitionView, NodeSpec, Version } from '../api-types';
import { ErrorBox, JsonBlock, Section, StatusBadge, Time, useAction } from '../ui';

/** What changed from a version to the draft: nodes added and removed, changed parameters and settings, edges. */
export interface VersionDiff {
  added: string[];
  removed: string[];
  changed: { id: string; fields: { field: string; before: unknown; after: unknown }[] }[];
  edgesAdded: string[];
  edgesRemoved: string[];
}

const edgeKey = (e: { from: string; to: string; output?: string }) => `${e.from}${e.output ? ` (${e.output})` : ''} → ${e.to}`;
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Each parameter by name, then the node's other fields; where it is drawn is not a change. */
function nodeFields(before: NodeSpec, after: NodeSpec): VersionDiff['changed'][number]['fields'] {
  const fields: VersionDiff['changed'][number]['fields'] = [];
  const parameters = new Set([...Object.keys(before.parameters ?? {}), ...Object.keys(after.parameters ?? {})]);
  for (const name of parameters) {
    const [b, a] = [before.parameters?.[name], after.parameters?.[name]];
    if (!same(b, a)) fields.push({ field: `parameters.${name}`, before: b, after: a });
  }
  const others = new Set(
    [...Object.keys(before), ...Object.keys(after)].filter((k) => k !== 'parameters' && k !== 'position' && k !== 'id'),
  );
  for (const key of others) {
    const [b, a] = [(before as Record<string, unknown>)[key], (after as Record<string, unknown>)[key]];
    if (!same(b, a)) fields.push({ field: key, before: b, after: a });
  }
  return fields;
}

export function versionDiff(version: Pick<Definition, 'nodes' | 'edges'>, draft: Pick<Definition, 'nodes' | 'edges'>): VersionDiff {
  const before = new Map(version.nodes.map((n) => [n.id, n]));
  const after = new Map(draft.nodes.map((n) => [n.id, n]));
  const edgesBefore = new Set((version.edges ?? []).map(edgeKey));
  const edgesAfter = new Set((draft.edges ?? []).map(edgeKey));
  return {
    added: [...after.keys()].filter((id) => !before.has(id)),
    removed: [...before.keys()].filter((id) => !after.has(id)),
    changed: [...after.values()]
      .filter((n) => before.has(n.id))
      .map((n) => ({ id: n.id, fields: nodeFields(before.get(n.id)!, n) }))
      .filter((c) => c.fields.length > 0),
    edgesAdded: [...edgesAfter].filter((e) => !edgesBefore.has(e)),
    edgesRemoved: [...edgesBefore].filter((e) => !edgesAfter.has(e)),
  };
}

/** A version's definition as the draft takes it back: what PUT accepts (a secret keeps its stored value). */
function restorable(definition: DefinitionView): Definition {
  const variables = (definition.variables ?? []).map(({ name, type, value }) => ({ name, type, value }));
  return {
    nodes: definition.nodes,
    edges: definition.edges ?? [],
    variables,
    ...(definition.notes?.length ? { notes: definition.notes } : {}),
  };
}

const shortJson = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v).slice(0, 120));

interface VersionsProps {
  base: string;
  versions?: Version[];
  error: unknown;
  /** The draft as the editor holds it now (unsaved changes included). */
  draft: Definition | null;
  onRestore: (definition: Definition, version: number) => void;
  onChanged: () => void;
}

/** The published versions: show one, compare it with the draft, restore it into the draft, or put it in force. */
export function Versions({ base, versions, error, draft, onRestore, onChanged }: VersionsProps) {
  const [shown, setShown] = useState<{ version: Version; mode: 'definition' | 'diff' } | null>(null);
  const activate = useAction(async (version: number) => {
    await api('POST', `${base}/versions/${version}/activate`);
    onChanged();
  });
  const load = useAction(async (version: number, mode: 'definition' | 'diff') => {
    if (shown?.version.version === version && shown.mode === mode) return setShown(null);
    setShown({ version: await api<Version>('GET', `${base}/versions/${version}`), mode });
  });
  const restore = useAction(async (version: number) => {
    const full = await api<Version>('GET', `${base}/versions/${version}`);
    if (!full.definition) throw new Error(`Version ${version} came back without its definition`);
    onRestore(restorable(full.definition), version);
  });
  const diff = shown?.mode === 'diff' && shown.version.definition && draft ? versionDiff(shown.version.definition, draft) : null;
  return (
    <Section title="Versions">
      <ErrorBox error={error ?? activate.error ?? load.error ?? restore.error} />
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
                    <button type="button" class="link" onClick={() => void load.run(v.version, 'definition')}>
                      {shown?.version.version === v.version && shown.mode === 'definition' ? 'Hide' : 'Show'} definition
                    </button>
                    <button
                      type="button"
                      class="link"
                      onClick={() => void load.run(v.version, 'diff')}
                      aria-label={`Compare with draft: version ${v.version}`}
                    >
                      Compare with draft
                    </button>
                    <button
                      type="button"
                      class="link"
                      disabled={restore.busy}
                      onClick={() => void restore.run(v.version)}
                      aria-label={`Restore version ${v.version} into the draft`}
                    >
                      Restore
                    </button>
                    {!v.active && (
                      <button
                        type="button"
                        class="link"
                        disabled={activate.busy}
                        onClick={() => void activate.run(v.version)}
                        aria-label={`Activate version ${v.version}`}
                      >
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
      {shown?.mode === 'definition' && (
        <JsonBlock label={`Definition of version ${shown.version.version}`} value={shown.version.definition} />
      )}
      {diff && shown && <DiffView diff={diff} version={shown.version.version} />}
    </Section>
  );
}

function DiffView({ diff, version }: { diff: VersionDiff; version: number }) {
  const empty = !diff.added.length && !diff.removed.length && !diff.changed.length && !diff.edgesAdded.length && !diff.edgesRemoved.length;
  return (
    <div class="version-diff" role="region" aria-label={`Draft compared with version ${version}`}>
      <h3>The draft compared with version {version}</h3>
      {empty && <p class="muted">No difference (positions aside).</p>}
      {diff.added.length > 0 && (
        <p class="diff-added">
          Nodes added:{' '}
          {diff.added.map((id) => (
            <code key={id}>{id} </code>
          ))}
        </p>
      )}
      {diff.removed.length > 0 && (
        <p class="diff-removed">
          Nodes removed:{' '}
          {diff.removed.map((id) => (
            <code key={id}>{id} </code>
          ))}
        </p>
      )}
      {diff.changed.map((c) => (
        <div key={c.id} class="diff-changed">
          <div>
            Node <code>{c.id}</code> changed:
          </div>
          <ul class="fields">
            {c.fields.map((f) => (
              <li key={f.field}>
                <code>{f.field}</code>: <del>{shortJson(f.before)}</del> → <ins>{shortJson(f.after)}</ins>
              </li>
            ))}
          </ul>
        </div>
      ))}
      {diff.edgesAdded.length > 0 && <p class="diff-added">Connections added: {diff.edgesAdded.join(', ')}</p>}
      {diff.edgesRemoved.length > 0 && <p class="diff-removed">Connections removed: {diff.edgesRemoved.join(', ')}</p>}
    </div>
  );
}
