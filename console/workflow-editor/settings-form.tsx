import { useState } from 'preact/hooks';
import { api } from '../api-client';
import type { Definition, Variable, Workflow, WorkflowSettings } from '../api-types';
import { ErrorBox, Section, useAction } from '../ui';

const VARIABLE_TYPES: Variable['type'][] = ['string', 'number', 'boolean', 'secret'];
const STEP_DATA = ['all', 'none'] as const;

interface SettingsProps {
  base: string;
  workflow: Workflow;
  /** The draft: its variables are edited here, saved with it. */
  definition: Definition | null;
  write: (next: Definition, group?: string) => void;
  /** Says what happened where the editor says it (it outlives the reload a save brings). */
  setNotice: (notice: string) => void;
  onSaved: () => void;
}

/** The workflow's settings (saved at once, not versioned) and its variables (part of the draft), as forms. */
export function SettingsSection({ base, workflow, definition, write, setNotice, onSaved }: SettingsProps) {
  return (
    <Section title="Settings and variables">
      <SettingsForm base={base} workflow={workflow} setNotice={setNotice} onSaved={onSaved} />
      {definition && <VariablesForm definition={definition} write={write} />}
    </Section>
  );
}

const numberOrUndefined = (text: string) => (text.trim() === '' ? undefined : Number(text));

function SettingsForm({
  base,
  workflow,
  setNotice,
  onSaved,
}: {
  base: string;
  workflow: Workflow;
  setNotice: (notice: string) => void;
  onSaved: () => void;
}) {
  const initial = workflow.settings ?? {};
  const [form, setForm] = useState({
    maxConcurrentRuns: initial.maxConcurrentRuns?.toString() ?? '',
    maxQueuedRuns: initial.maxQueuedRuns?.toString() ?? '',
    requests: initial.rateLimit?.requests?.toString() ?? '',
    perSeconds: initial.rateLimit?.perSeconds?.toString() ?? '',
    errorWorkflowId: initial.errorWorkflowId ?? '',
    succeeded: initial.stepData?.succeeded ?? 'all',
    failed: initial.stepData?.failed ?? 'all',
  });
  const set = (change: Partial<typeof form>) => setForm({ ...form, ...change });
  const save = useAction(async () => {
    const requests = numberOrUndefined(form.requests);
    const perSeconds = numberOrUndefined(form.perSeconds);
    const settings: WorkflowSettings = {
      ...(numberOrUndefined(form.maxConcurrentRuns) !== undefined ? { maxConcurrentRuns: numberOrUndefined(form.maxConcurrentRuns) } : {}),
      ...(numberOrUndefined(form.maxQueuedRuns) !== undefined ? { maxQueuedRuns: numberOrUndefined(form.maxQueuedRuns) } : {}),
      ...(requests !== undefined || perSeconds !== undefined
        ? { rateLimit: { requests: requests as number, perSeconds: perSeconds as number } }
        : {}),
      ...(form.errorWorkflowId.trim() ? { errorWorkflowId: form.errorWorkflowId.trim() } : {}),
      stepData: { succeeded: form.succeeded, failed: form.failed },
    };
    // Settings go with the stored draft as it is: unsaved canvas edits stay unsaved.
    const stored = workflow.definition;
    const definition = {
      nodes: stored.nodes,
      edges: stored.edges ?? [],
      variables: (stored.variables ?? []).map(({ name, type, value }) => ({ name, type, value })),
      ...(stored.pinnedData ? { pinnedData: stored.pinnedData } : {}),
      ...(stored.notes?.length ? { notes: stored.notes } : {}),
    };
    await api('PUT', base, { body: { definition, settings } });
    setNotice('Settings saved: they apply to every run from now on.');
    onSaved();
  });
  const input = (label: string, key: keyof typeof form, hint: string, extra: Record<string, unknown> = {}) => (
    <label>
      {label}
      <input type="number" value={form[key]} onInput={(e) => set({ [key]: e.currentTarget.value })} {...extra} />
      <span class="hint">{hint}</span>
    </label>
  );
  return (
    <form
      class="settings-form"
      aria-label="Workflow settings"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <h3>Settings</h3>
      <div class="columns">
        {input('Runs at once', 'maxConcurrentRuns', 'Across all workers; more wait in the queue. Empty: no limit of its own.', {
          min: 1,
          max: 10000,
        })}
        {input('Queued runs at most', 'maxQueuedRuns', 'Beyond it callers get 429; lowers the service limit, never raises it.', { min: 1 })}
        {input('Webhook calls per window', 'requests', 'Rate limit: calls accepted per window (with the window below).', { min: 1 })}
        {input('Window (seconds)', 'perSeconds', 'Length of the rate limit window.', { min: 1, max: 86400 })}
        <label>
          Error workflow id
          <input value={form.errorWorkflowId} placeholder="wfl_…" onInput={(e) => set({ errorWorkflowId: e.currentTarget.value })} />
          <span class="hint">Its published version runs when a production run of this one fails.</span>
        </label>
        <label>
          Keep step data of succeeded runs
          <select value={form.succeeded} onChange={(e) => set({ succeeded: e.currentTarget.value as 'all' | 'none' })}>
            {STEP_DATA.map((v) => (
              <option key={v}>{v}</option>
            ))}
          </select>
        </label>
        <label>
          Keep step data of failed runs
          <select value={form.failed} onChange={(e) => set({ failed: e.currentTarget.value as 'all' | 'none' })}>
            {STEP_DATA.map((v) => (
              <option key={v}>{v}</option>
            ))}
          </select>
        </label>
      </div>
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          Save settings
        </button>
      </div>
      <ErrorBox error={save.error} />
    </form>
  );
}

/** The draft's variables as rows; a secret's stored value is never shown, typing one replaces it. */
function VariablesForm({ definition, write }: { definition: Definition; write: (next: Definition, group?: string) => void }) {
  const variables = definition.variables ?? [];
  const update = (next: Variable[], group?: string) => write({ ...definition, variables: next }, group);
  const change = (i: number, patch: Partial<Variable>) =>
    update(
      variables.map((v, j) => (j === i ? { ...v, ...patch } : v)),
      `variable:${i}`,
    );
  const typed = (type: Variable['type'], text: string): Variable['value'] =>
    type === 'number'
      ? text.trim() === ''
        ? null
        : Number(text)
      : type === 'boolean'
        ? text === 'true'
        : text === '' && type === 'secret'
          ? null
          : text;
  return (
    <fieldset class="variables-form" aria-label="Variables">
      <legend>Variables</legend>
      <p class="muted small">Read in expressions as variables.&lt;name&gt;; part of the draft: save the draft to keep them.</p>
      {variables.map((v, i) => (
        <div class="field-row variable-row" key={i}>
          <input aria-label={`Variable ${i + 1} name`} value={v.name} onInput={(e) => change(i, { name: e.currentTarget.value })} />
          <select
            aria-label={`Variable ${i + 1} type`}
            value={v.type}
            onChange={(e) => change(i, { type: e.currentTarget.value as Variable['type'], value: null })}
          >
            {VARIABLE_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
          {v.type === 'boolean' ? (
            <select
              aria-label={`Variable ${i + 1} value`}
              value={String(v.value === true)}
              onChange={(e) => change(i, { value: typed('boolean', e.currentTarget.value) })}
            >
              <option value="true">true</option>
              <option value="false">false</option>
            </select>
          ) : (
            <input
              aria-label={`Variable ${i + 1} value`}
              type={v.type === 'secret' ? 'password' : v.type === 'number' ? 'number' : 'text'}
              autoComplete="off"
              placeholder={v.type === 'secret' ? 'stored: type to replace' : ''}
              value={v.value === null || v.value === undefined ? '' : String(v.value)}
              onInput={(e) => change(i, { value: typed(v.type, e.currentTarget.value) })}
            />
          )}
          <button
            type="button"
            class="link danger"
            aria-label={`Remove variable ${i + 1}`}
            onClick={() => update(variables.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      <button
        type="button"
        class="secondary"
        onClick={() => update([...variables, { name: `var${variables.length + 1}`, type: 'string', value: '' }])}
      >
        Add variable
      </button>
    </fieldset>
  );
}
