import { useEffect, useState } from 'preact/hooks';
import type { JsonSchema, NodeSpec, NodeType, ParameterMode } from './api-types';
import type { ShownProblem } from './definition-check';
import { ExpressionEditor } from './expressions/expression-editor';
import { isObject } from './json-schema';
import { CredentialSelect, DynamicSelect } from './node-form-selects';
import { NodeSettings } from './node-settings-form';

/** The drag's payload type the data views set: an expression reading the dragged field. */
export const EXPRESSION_DRAG = 'application/x-workflow-expression';

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
  /** A field dragged from the node's input: the parameter reads it as an expression. */
  const setExpression = (name: string, expression: string) =>
    onChange({ ...node, parameters: { ...parameters, [name]: expression }, parameterMode: { ...parameterMode, [name]: 'expression' } });
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
          onExpression={(expression) => setExpression(name, expression)}
          siblings={parameters}
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
  onExpression: (expression: string) => void;
  /** The node's parameters, which a dropdown's choices may depend on (an MCP server's tools). */
  siblings: Record<string, unknown>;
}

function ParameterField(props: ParameterFieldProps) {
  const { name, schema, required, value, mode, modes, nodeType, problems, onValue, onMode, onExpression, siblings } = props;
  const [dropping, setDropping] = useState(false);
  const accepts = (e: DragEvent) => Boolean(e.dataTransfer?.types.includes(EXPRESSION_DRAG)) && schema.format !== 'credential';
  const title = (schema.title as string | undefined) ?? name;
  // A credential is named by a fixed id: never an expression (the server refuses one).
  const allowed = schema.format === 'credential' ? modes.filter((m) => m === 'fixed') : modes;
  const offered = allowed.includes(mode) ? allowed : [...allowed, mode];
  return (
    <div
      class={`parameter${problems.some((p) => !p.advisory) ? ' invalid' : problems.length ? ' doubtful' : ''}${dropping ? ' dropping' : ''}`}
      data-parameter={name}
      onDragOver={(e) => {
        if (!accepts(e)) return;
        e.preventDefault();
        setDropping(true);
      }}
      onDragLeave={() => setDropping(false)}
      onDrop={(e) => {
        setDropping(false);
        const expression = e.dataTransfer?.getData(EXPRESSION_DRAG);
        if (!expression || !accepts(e)) return;
        e.preventDefault();
        onExpression(expression);
      }}
    >
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
        <FixedInput
          label={title}
          schema={schema}
          required={required}
          value={value}
          nodeType={nodeType}
          name={name}
          siblings={siblings}
          onValue={onValue}
        />
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
  siblings: Record<string, unknown>;
  onValue: (value: unknown) => void;
}

function FixedInput({ label, name, schema, required, value, nodeType, siblings, onValue }: FixedInputProps) {
  const placeholder =
    schema.default === undefined ? '' : `default: ${typeof schema.default === 'string' ? schema.default : JSON.stringify(schema.default)}`;
  if (schema.format === 'credential') {
    const types = Array.isArray(schema['x-credential-types']) ? (schema['x-credential-types'] as string[]) : null;
    return <CredentialSelect label={label} types={types} value={value} required={required} onValue={onValue} />;
  }
  if (schema['x-dynamic-options'] === true) {
    return (
      <DynamicSelect
        label={label}
        nodeType={nodeType}
        name={name}
        value={value}
        required={required}
        siblings={siblings}
        onValue={onValue}
      />
    );
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
