import { useEffect, useState } from 'preact/hooks';
import type { Credential, NodeType, OptionItem } from './api-types';
import { loadCredentials, loadOptions } from './node-types';
import { Link } from './router';
import { ErrorBox } from './ui';

const OPTIONS_DELAY_MS = 300;

export function DynamicSelect({
  label,
  nodeType,
  name,
  value,
  required,
  siblings,
  onValue,
}: {
  label: string;
  nodeType: NodeType;
  name: string;
  value: unknown;
  required: boolean;
  /** The node's other parameters, sent as `?parameters=`: the choices may depend on them (an MCP server's url and credential). */
  siblings: Record<string, unknown>;
  onValue: (value: unknown) => void;
}) {
  const [items, setItems] = useState<OptionItem[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const { [name]: _own, ...others } = siblings;
  const context = JSON.stringify(others);
  useEffect(() => {
    let live = true;
    setItems(null);
    setError(null);
    // Asked again once typing in the other fields pauses, not at every key.
    const timer = window.setTimeout(() => {
      loadOptions(nodeType.type, nodeType.version, name, others).then(
        (found) => live && setItems(found),
        (failure) => live && setError(failure),
      );
    }, OPTIONS_DELAY_MS);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [nodeType.type, nodeType.version, name, context]);
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
export function CredentialSelect({
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
