import { useState } from 'preact/hooks';
import { json } from '../format';
import { isObject } from '../json-schema';

import { EXPRESSION_DRAG } from '../node-form';
const MAX_ROWS = 50;
const MAX_COLUMNS = 20;
const MAX_DEPTH = 4;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `root` followed by `path` as JavaScript: `item.total`, `input[0]["unit price"]`. */
export function pathExpression(root: string, path: readonly (string | number)[]): string {
  return path.reduce<string>(
    (out, part) =>
      typeof part === 'number' ? `${out}[${part}]` : IDENTIFIER.test(part) ? `${out}.${part}` : `${out}[${JSON.stringify(part)}]`,
    root,
  );
}

type Mode = 'table' | 'json' | 'schema';

interface DataViewProps {
  /** Names the region: "Input of if", "Output of if". */
  label: string;
  value: unknown;
  /**
   * How expressions of the node read this data (`item` or `input`), when its fields may be dragged
   * into a parameter; null for data no expression of the node reads (its output).
   */
  root: 'item' | 'input' | null;
}

/**
 * Data as n8n shows it beside a node: a table of items, the JSON, or the schema of its keys. With
 * a root, a column or key can be dragged onto a parameter, which then reads it as an expression.
 */
export function DataView({ label, value, root }: DataViewProps) {
  const [mode, setMode] = useState<Mode>(Array.isArray(value) || isObject(value) ? 'table' : 'json');
  // In run mode item an expression reads one element; in run mode input the whole input.
  const items = Array.isArray(value) ? value : [value];
  const base = root === 'item' || !Array.isArray(value) ? [] : [0];
  const expressionRoot = root ?? 'input';
  const drag = root
    ? (path: (string | number)[]) => ({
        draggable: true,
        title: `Drag onto a parameter: ${pathExpression(expressionRoot, [...base, ...path])}`,
        onDragStart: (e: DragEvent) => {
          const expression = pathExpression(expressionRoot, [...base, ...path]);
          e.dataTransfer?.setData(EXPRESSION_DRAG, expression);
          e.dataTransfer?.setData('text/plain', expression);
        },
      })
    : () => ({});
  return (
    <div class="data-view" role="region" aria-label={label}>
      <div class="data-modes" role="group" aria-label={`${label}: view`}>
        {(['table', 'json', 'schema'] as const).map((m) => (
          <button key={m} type="button" class={mode === m ? 'tab active' : 'tab'} aria-pressed={mode === m} onClick={() => setMode(m)}>
            {m === 'json' ? 'JSON' : m[0].toUpperCase() + m.slice(1)}
          </button>
        ))}
      </div>
      {value === undefined ? (
        <p class="muted small">No data yet.</p>
      ) : mode === 'json' ? (
        <pre class="json" tabIndex={0} aria-label={`${label} (JSON)`}>
          {json(value)}
        </pre>
      ) : mode === 'table' ? (
        <DataTable label={label} items={items} drag={drag} />
      ) : (
        <ul class="schema" aria-label={`${label} (schema)`}>
          <SchemaRows value={Array.isArray(value) ? value[0] : value} path={[]} depth={0} drag={drag} />
        </ul>
      )}
    </div>
  );
}

type Drag = (path: (string | number)[]) => Record<string, unknown>;

function DataTable({ label, items, drag }: { label: string; items: unknown[]; drag: Drag }) {
  const objects = items.every((i) => isObject(i));
  const columns = objects ? [...new Set(items.slice(0, MAX_ROWS).flatMap((i) => Object.keys(i as object)))].slice(0, MAX_COLUMNS) : [];
  const cell = (v: unknown) => (typeof v === 'string' ? v : json(v));
  return (
    <div class="table-scroll data-table">
      <table aria-label={`${label} (table)`}>
        <thead>
          <tr>
            <th>#</th>
            {objects ? (
              columns.map((c) => (
                <th key={c}>
                  <span class="data-key" {...drag([c])}>
                    {c}
                  </span>
                </th>
              ))
            ) : (
              <th>value</th>
            )}
          </tr>
        </thead>
        <tbody>
          {items.slice(0, MAX_ROWS).map((item, i) => (
            <tr key={i}>
              <td class="muted">{i}</td>
              {objects ? columns.map((c) => <td key={c}>{cell((item as Record<string, unknown>)[c])}</td>) : <td>{cell(item)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
      {items.length > MAX_ROWS && (
        <p class="muted small">
          The first {MAX_ROWS} of {items.length} items.
        </p>
      )}
    </div>
  );
}

const kindOf = (v: unknown) => (Array.isArray(v) ? `array of ${v.length}` : v === null ? 'null' : typeof v);

function SchemaRows({ value, path, depth, drag }: { value: unknown; path: (string | number)[]; depth: number; drag: Drag }) {
  if (!isObject(value)) return path.length ? null : <li class="muted">{kindOf(value)}</li>;
  return (
    <>
      {Object.entries(value).map(([key, v]) => (
        <li key={key}>
          <span class="data-key" {...drag([...path, key])}>
            {key}
          </span>{' '}
          <span class="muted small">
            {kindOf(v)}
            {!isObject(v) && !Array.isArray(v) ? `: ${String(v).slice(0, 40)}` : ''}
          </span>
          {isObject(v) && depth < MAX_DEPTH && (
            <ul>
              <SchemaRows value={v} path={[...path, key]} depth={depth + 1} drag={drag} />
            </ul>
          )}
        </li>
      ))}
    </>
  );
}
