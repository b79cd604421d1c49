import { useEffect, useState } from 'preact/hooks';
import type { Backoff, Credential, JsonSchema, NodeSpec, NodeType, OnError, OptionItem, ParameterMode } from './api-types';
import type { ShownProblem } from './definition-check';
import { ExpressionEditor } from './expressions/expression-editor';
import { isObject } from './json-schema';
import { loadCredentials, loadOptions } from './node-types';
import { failureSettings, withFailureSettings } from './node-settings';
import { Link } from './router';
import { ErrorBox } from './ui';

const MODE_LABELS: Record<ParameterMode, string> = { fixed: 'Fixed', expression: 'Expression', ai: 'AI Decide' };

interface NodeFormProps {
  node: NodeSpec;
  nodeType: NodeType;
  modes: readonly ParameterMode[];
  /** Problems of this node, their fields relative to it (`parameters.url`, `runMode`). */
  problems: readonly ShownProblem[];
  onChange: (node: NodeSpec) => void;
}

/**
 * One node's parameters as a form, built from its type's JSON Schema; it edits the same
 * definition as the JSON beside it. A parameter marked `x-dynamic-options` is a dropdown of the
 * choices the server offers the signed-in user.
 */
export function NodeForm({ node, nodeType, modes, problems, onChange }: NodeFormProps) {
  const properties = (nodeType.parameters.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set<string>((nodeType.parameters.required as string[] | undefined) ?? []);
  const parameters = node.parameters ?? {};
  const parameterMode = node.parameterMode ?? {};

  const setValue = (name: string, value: unknown) => {
    const next = { ...parameters };
    if (value === undefined) delete next[name];
    else next[name] = value;
    onChange({ ...node, parameters: next });
  };
  const setMode = (name: string, mode: ParameterMode) => {
    const next = { ...parameterMode };
    if (mode === 'fixed') delete next[name];
    else next[name] = mode;
    onChange({ ...node, ...(Object.keys(next).length ? { parameterMode: next } : { parameterMode: undefined }) });
  };
  const problemsOf = (field: string) =>
    problems.filter((p) => p.field === field || p.field.startsWith(`${field}.`) || p.field.startsWith(`${field}[`));

  return (
    <fieldset class="node-form" aria-label={`Parameters of ${node.id}`}>
      <legend>
        {node.id}{' '}
        <span class="muted">
          · {nodeType.displayName} v{nodeType.version}
        </span>
      </legend>
      <p class="muted small">{nodeType.description}</p>
      {Object.keys(properties).length === 0 && <p class="muted">This node type has no parameters.</p>}
      {Object.entries(properties).map(([name, schema]) => (
        <ParameterField
          key={`${node.id}/${name}`}
          name={name}
          schema={schema}
          required={required.has(name)}
          value={parameters[name]}
          mode={parameterMode[name] ?? 'fixed'}
          modes={modes}
          nodeType={nodeType}
          problems={[...problemsOf(`parameters.${name}`), ...problemsOf(`parameterMode.${name}`)]}
          onValue={(value) => setValue(name, value)}
          onMode={(mode) => setMode(name, mode)}
        />
      ))}
      <div class="columns">
        <label>
          Run mode
          <select
            aria-label="Run mode"
            value={node.runMode ?? ''}
            onChange={(e) => onChange({ ...node, runMode: (e.currentTarget.value || undefined) as NodeSpec['runMode'] })}
            disabled={nodeType.trigger}
          >
            <option value="">default ({nodeType.defaultRunMode})</option>
            <option value="input">input: once for the whole input</option>
            <option value="item">item: once per array element</option>
          </select>
        </label>
      </div>
      <NodeSettings node={node} problems={problems} onChange={onChange} />
    </fieldset>
  );
}

/** The server's limits (workflows.dto.ts MAX_TRIES, MAX_WAIT_BETWEEN_TRIES_MS). */
const MAX_TRIES = 5;
const MAX_WAIT_MS = 5 * 60 * 1000;

const ON_ERROR_LABELS: Record<OnError, string> = {
  stop: 'stop: skip what follows, the run fails',
  continue: 'continue: the error becomes its output',
  errorOutput: 'error output: failed items go to an "error" port',
};

/** Retries and what happens on failure, as n8n's node settings; the server's refusal is shown beside the field it names. */
function NodeSettings({
  node,
  problems,
  onChange,
}: {
  node: NodeSpec;
  problems: readonly ShownProblem[];
  onChange: (node: NodeSpec) => void;
}) {
  const settings = failureSettings(node);
  const set = (change: Partial<typeof settings>) => onChange(withFailureSettings(node, { ...settings, ...change }));
  const number = (text: string) => (text === '' ? undefined : Number(text));
  const problemOf = (field: string) =>
    problems
      .filter((p) => p.field === field)
      .map((p, i) => (
        <div key={i} class={p.advisory ? 'warning-text' : 'error-text'} role={p.advisory ? undefined : 'alert'}>
          {p.reason}
        </div>
      ));
  return (
    <fieldset class="node-form node-settings" aria-label={`Settings of ${node.id}`}>
      <legend>Settings</legend>
      <label>
        On error
        <select aria-label="On error" value={settings.onError} onChange={(e) => set({ onError: e.currentTarget.value as OnError })}>
          {(Object.keys(ON_ERROR_LABELS) as OnError[]).map((value) => (
            <option key={value} value={value}>
              {ON_ERROR_LABELS[value]}
            </option>
          ))}
        </select>
      </label>
      {problemOf('onError')}
      {problemOf('continueOnError')}
      <label class="check">
        <input type="checkbox" checked={settings.retryOnFail} onChange={(e) => set({ retryOnFail: e.currentTarget.checked })} />
        Retry on fail
      </label>
      {problemOf('retryOnFail')}
      {problemOf('retry')}
      {settings.retryOnFail && (
        <div class="columns">
          <label>
            Max tries
            <input
              type="number"
              aria-label="Max tries"
              min={1}
              max={MAX_TRIES}
              step={1}
              placeholder="default: 3"
              value={settings.maxTries ?? ''}
              onInput={(e) => set({ maxTries: number(e.currentTarget.value) })}
            />
            {problemOf('maxTries')}
          </label>
          <label>
            Wait between tries (ms)
            <input
              type="number"
              aria-label="Wait between tries (ms)"
              min={0}
              max={MAX_WAIT_MS}
              step={100}
              placeholder="default: 1000"
              value={settings.waitBetweenTries ?? ''}
              onInput={(e) => set({ waitBetweenTries: number(e.currentTarget.value) })}
            />
            {problemOf('waitBetweenTries')}
          </label>
          <label>
            Backoff
            <select
              aria-label="Backoff"
              value={settings.backoff ?? 'fixed'}
              onChange={(e) => set({ backoff: e.currentTarget.value as Backoff })}
            >
              <option value="fixed">fixed: the same wait each time</option>
              <option value="exponential">exponential: the wait doubles</option>
            </select>
            {problemOf('backoff')}
          </label>
        </div>
      )}
      <div class="hint">
        Retries apply to failures that may pass (no answer, a timeout, HTTP 408, 425, 429 or 5xx), never to a configuration error; at most{' '}
        {MAX_TRIES} tries.
        {settings.onError === 'errorOutput' ? ' Connect the node\'s "error" port to handle what failed.' : ''}
      </div>
    </fieldset>
  );
}

interface ParameterFieldProps {
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: unknown;
  mode: ParameterMode;
  modes: readonly ParameterMode[];
  nodeType: NodeType;
  problems: readonly ShownProblem[];
  onValue: (value: unknown) => void;
  onMode: (mode: ParameterMode) => void;
}

function ParameterField({ name, schema, required, value, mode, modes, nodeType, problems, onValue, onMode }: ParameterFieldProps) {
  const title = (schema.title as string | undefined) ?? name;
  // A credential is named by a fixed id: never an expression (the server refuses one).
  const allowed = schema.format === 'credential' ? modes.filter((m) => m === 'fixed') : modes;
  const offered = allowed.includes(mode) ? allowed : [...allowed, mode];
  return (
    <div class={`parameter${problems.some((p) => !p.advisory) ? ' invalid' : problems.length ? ' doubtful' : ''}`}>
      <div class="parameter-head">
        <span class="parameter-name">
          {title}
          {required && <span aria-hidden="true"> *</span>} <code class="muted">{name}</code>
        </span>
        {offered.length > 1 && (
          <select aria-label={`${title} mode`} value={mode} onChange={(e) => onMode(e.currentTarget.value as ParameterMode)}>
            {offered.map((m) => (
              <option key={m} value={m}>
                {MODE_LABELS[m]}
              </option>
            ))}
          </select>
        )}
      </div>
      {mode === 'fixed' ? (
        <FixedInput label={title} schema={schema} required={required} value={value} nodeType={nodeType} name={name} onValue={onValue} />
      ) : mode === 'expression' ? (
        <ExpressionEditor
          label={title}
          value={typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value)}
          placeholder="JavaScript, e.g. input.id or ${item.page * 20}"
          onChange={onValue}
        />
      ) : (
        <textarea
          aria-label={title}
          rows={2}
          value={typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value)}
          placeholder="Optional hint for the model"
          onInput={(e) => onValue(e.currentTarget.value === '' ? undefined : e.currentTarget.value)}
        />
      )}
      {schema.description && <div class="hint">{schema.description as string}</div>}
      {problems.map((p, i) =>
        p.advisory ? (
          <div key={i} class="warning-text">
            {p.reason} <span class="muted">(console check)</span>
          </div>
        ) : (
          <div key={i} class="error-text" role="alert">
            {p.reason} <span class="muted">(refused by the server)</span>
          </div>
        ),
      )}
    </div>
  );
}

interface FixedInputProps {
  label: string;
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: unknown;
  nodeType: NodeType;
  onValue: (value: unknown) => void;
}

function FixedInput({ label, name, schema, required, value, nodeType, onValue }: FixedInputProps) {
  const placeholder =
    schema.default === undefined ? '' : `default: ${typeof schema.default === 'string' ? schema.default : JSON.stringify(schema.default)}`;
  if (schema.format === 'credential') {
    const types = Array.isArray(schema['x-credential-types']) ? (schema['x-credential-types'] as string[]) : null;
    return <CredentialSelect label={label} types={types} value={value} required={required} onValue={onValue} />;
  }
  if (schema['x-dynamic-options'] === true) {
    return <DynamicSelect label={label} nodeType={nodeType} name={name} value={value} required={required} onValue={onValue} />;
  }
  if (Array.isArray(schema.enum)) {
    const options = schema.enum as unknown[];
    return (
      <select
        aria-label={label}
        value={value === undefined ? '' : JSON.stringify(value)}
        onChange={(e) => onValue(e.currentTarget.value ? JSON.parse(e.currentTarget.value) : undefined)}
      >
        <option value="">{required ? '(choose)' : placeholder || '(not set)'}</option>
        {options.map((option) => (
          <option key={JSON.stringify(option)} value={JSON.stringify(option)}>
            {String(option)}
          </option>
        ))}
      </select>
    );
  }
  switch (schema.type) {
    case 'boolean':
      return (
        <label class="check">
          <input
            type="checkbox"
            checked={value === true || (value === undefined && schema.default === true)}
            onChange={(e) => onValue(e.currentTarget.checked)}
          />
          {label}
        </label>
      );
    case 'integer':
    case 'number':
      return (
        <input
          type="number"
          aria-label={label}
          value={typeof value === 'number' ? String(value) : ''}
          placeholder={placeholder}
          step={schema.type === 'integer' ? 1 : 'any'}
          onInput={(e) => onValue(e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value))}
        />
      );
    case 'string': {
      const text = typeof value === 'string' ? value : '';
      const multiline = schema['x-code'] !== undefined || schema['x-template'] === true || text.includes('\n');
      const onInput = (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) =>
        onValue(e.currentTarget.value === '' && !required ? undefined : e.currentTarget.value);
      return multiline ? (
        <textarea
          aria-label={label}
          rows={schema['x-code'] ? 6 : 3}
          value={text}
          placeholder={placeholder}
          onInput={onInput}
          class={schema['x-code'] ? 'code' : ''}
        />
      ) : (
        <input aria-label={label} value={text} placeholder={placeholder} onInput={onInput} />
      );
    }
    case 'object':
      // Named fields of any value (Edit Fields' `fields`, `rename`): rows, not JSON to type.
      if (!isObject(schema.properties) && (value === undefined || isObject(value))) {
        return <FieldsInput label={label} value={(value as Record<string, unknown> | undefined) ?? {}} onValue={onValue} />;
      }
      return <JsonInput label={label} value={value} placeholder={placeholder} onValue={onValue} />;
    default:
      return <JsonInput label={label} value={value} placeholder={placeholder} onValue={onValue} />;
  }
}

/** Arrays, objects and untyped values are edited as JSON; the definition changes once the text parses. */
function JsonInput({
  label,
  value,
  placeholder,
  onValue,
}: {
  label: string;
  value: unknown;
  placeholder: string;
  onValue: (value: unknown) => void;
}) {
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value));
  const [invalid, setInvalid] = useState(false);
  useEffect(() => {
    // Follows edits made in the JSON editor, unless this field holds text that does not parse yet.
    if (!invalid) setText(value === undefined ? '' : JSON.stringify(value));
  }, [JSON.stringify(value)]);
  return (
    <>
      <textarea
        aria-label={label}
        rows={2}
        class="code"
        value={text}
        placeholder={placeholder || 'JSON'}
        onInput={(e) => {
          const next = e.currentTarget.value;
          setText(next);
          if (next.trim() === '') {
            setInvalid(false);
            onValue(undefined);
            return;
          }
          try {
            onValue(JSON.parse(next));
            setInvalid(false);
          } catch {
            setInvalid(true);
          }
        }}
      />
      {invalid && <div class="error-text">Not valid JSON yet: the definition keeps the last valid value.</div>}
    </>
  );
}

function DynamicSelect({
  label,
  nodeType,
  name,
  value,
  required,
  onValue,
}: {
  label: string;
  nodeType: NodeType;
  name: string;
  value: unknown;
  required: boolean;
  onValue: (value: unknown) => void;
}) {
  const [items, setItems] = useState<OptionItem[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    setItems(null);
    setError(null);
    loadOptions(nodeType.type, nodeType.version, name).then(
      (found) => live && setItems(found),
      (failure) => live && setError(failure),
    );
    return () => {
      live = false;
    };
  }, [nodeType.type, nodeType.version, name]);
  const current = typeof value === 'string' ? value : '';
  if (error) {
    return (
      <>
        <input aria-label={label} value={current} onInput={(e) => onValue(e.currentTarget.value || undefined)} />
        <ErrorBox error={new Error(`The choices could not be loaded (${(error as Error).message}); type the value instead.`)} />
      </>
    );
  }
  const known = items?.some((item) => item.value === current) ?? false;
  const chosen = items?.find((item) => item.value === current);
  return (
    <>
      <select aria-label={label} value={current} disabled={items === null} onChange={(e) => onValue(e.currentTarget.value || undefined)}>
        <option value="">{items === null ? 'Loading choices…' : required ? '(choose)' : '(not set)'}</option>
        {current && !known && items !== null && <option value={current}>{current} (not among your choices)</option>}
        {(items ?? []).map((item) => (
          <option key={String(item.value)} value={String(item.value)}>
            {item.label}
          </option>
        ))}
      </select>
      {chosen?.description && <div class="hint">{chosen.description}</div>}
    </>
  );
}

/**
 * The credentials the signed-in user may use (any role on them lets a node name them), of the
 * types the parameter takes; each is named with its type, never with a value (none is ever sent).
 */
function CredentialSelect({
  label,
  types,
  value,
  required,
  onValue,
}: {
  label: string;
  types: readonly string[] | null;
  value: unknown;
  required: boolean;
  onValue: (value: unknown) => void;
}) {
  const [items, setItems] = useState<Credential[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    loadCredentials().then(
      (found) => live && setItems(found),
      (failure) => live && setError(failure),
    );
    return () => {
      live = false;
    };
  }, []);
  const usable = (items ?? []).filter((c) => types === null || types.includes(c.type));
  const current = typeof value === 'string' ? value : '';
  const known = usable.some((c) => c.id === current);
  return (
    <>
      <select
        aria-label={label}
        value={current}
        disabled={items === null && !error}
        onChange={(e) => onValue(e.currentTarget.value || undefined)}
      >
        <option value="">{items === null && !error ? 'Loading credentials…' : required ? '(choose)' : '(none)'}</option>
        {current && !known && (items !== null || error) && (
          <option value={current}>{current} (not among the credentials you may use)</option>
        )}
        {usable.map((c) => (
          <option key={c.id} value={c.id}>
            {c.name} ({c.type})
          </option>
        ))}
      </select>
      {error ? <ErrorBox error={new Error(`Your credentials could not be loaded (${(error as Error).message}).`)} /> : null}
      {items !== null && usable.length === 0 && (
        <div class="hint">
          You have no credential{types ? ` of type ${types.join(', ')}` : ''} yet: create one on the{' '}
          <Link href="/credentials">Credentials</Link> page.
        </div>
      )}
    </>
  );
}

/** A value typed in a row: JSON when it reads as JSON (42, true, "text", [1]), else the text itself. */
export function fieldValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const fieldText = (value: unknown) => (typeof value === 'string' && typeof fieldValue(value) === 'string' ? value : JSON.stringify(value));

/** An object as name / value rows; the definition changes as the rows do, an empty name is left out. */
function FieldsInput({ label, value, onValue }: { label: string; value: Record<string, unknown>; onValue: (value: unknown) => void }) {
  const [rows, setRows] = useState<[string, string][]>(() => Object.entries(value).map(([k, v]) => [k, fieldText(v)]));
  const shown = JSON.stringify(Object.fromEntries(rows.filter(([k]) => k).map(([k, v]) => [k, fieldValue(v)])));
  useEffect(() => {
    // Follows edits made elsewhere (the JSON tab, undo) unless they are these rows' own.
    if (JSON.stringify(value) !== shown) setRows(Object.entries(value).map(([k, v]) => [k, fieldText(v)]));
  }, [JSON.stringify(value)]);
  const update = (next: [string, string][]) => {
    setRows(next);
    const object = Object.fromEntries(next.filter(([k]) => k).map(([k, v]) => [k, fieldValue(v)]));
    onValue(Object.keys(object).length ? object : undefined);
  };
  return (
    <div class="fields-input" role="group" aria-label={label}>
      {rows.map(([name, text], i) => (
        <div class="field-row" key={i}>
          <input
            aria-label={`${label} ${i + 1} name`}
            placeholder="name"
            value={name}
            onInput={(e) => update(rows.map((r, j) => (j === i ? [e.currentTarget.value, r[1]] : r)))}
          />
          <input
            aria-label={`${label} ${i + 1} value`}
            placeholder="value"
            value={text}
            onInput={(e) => update(rows.map((r, j) => (j === i ? [r[0], e.currentTarget.value] : r)))}
          />
          <button
            type="button"
            class="link danger"
            aria-label={`Remove ${label} ${i + 1}`}
            onClick={() => update(rows.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" class="secondary" onClick={() => setRows([...rows, ['', '']])}>
        Add {label.toLowerCase()} entry
      </button>
      <div class="hint">A value that reads as JSON (42, true, "text", [1, 2]) is that value; anything else is text.</div>
    </div>
  );
}
