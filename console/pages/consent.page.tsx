import { useState } from 'preact/hooks';
import { api } from '../api-client';
import { ErrorBox, useAction, useLoad } from '../ui';

interface ConsentDetails {
  client: { id: string; name: string | null; uri: string | null };
  redirectUri: string | null;
  resource: string;
  scopes: { scope: string; description: string }[];
  collections: { id: string; name: string }[];
  workflows: { workflowId: string; name: string; title: string }[];
}

/** One list of checkboxes with "all" above it: all (null) or the ids ticked. */
function Narrowing<T>(props: {
  legend: string;
  allLabel: string;
  items: T[];
  idOf: (item: T) => string;
  labelOf: (item: T) => string;
  chosen: Set<string> | null;
  onChange: (chosen: Set<string> | null) => void;
}) {
  const { chosen, onChange } = props;
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      <label>
        <input type="checkbox" checked={chosen === null} onChange={(e) => onChange(e.currentTarget.checked ? null : new Set())} />{' '}
        {props.allLabel}
      </label>
      {chosen !== null &&
        props.items.map((item) => {
          const id = props.idOf(item);
          return (
            <label key={id}>
              <input
                type="checkbox"
                checked={chosen.has(id)}
                onChange={(e) => {
                  const next = new Set(chosen);
                  if (e.currentTarget.checked) next.add(id);
                  else next.delete(id);
                  onChange(next);
                }}
              />{' '}
              {props.labelOf(item)}
            </label>
          );
        })}
    </fieldset>
  );
}

/**
 * The consent of an OAuth authorization request (a remote MCP client asking to act for the user):
 * who asks, what for, and the user's choice of scopes, collections and workflows. The user is
 * signed in with their API key (the console's session); the answer sends the browser back to the
 * authorization server, which sends it on to the client.
 */
export function ConsentPage({ uid }: { uid: string }) {
  const base = `/console/oauth/${encodeURIComponent(uid)}`;
  const details = useLoad(() => api<ConsentDetails>('GET', `${base}/details`), [uid]);
  const [scopes, setScopes] = useState<Set<string> | null>(null);
  const [collections, setCollections] = useState<Set<string> | null>(null);
  const [workflows, setWorkflows] = useState<Set<string> | null>(null);
  const decide = useAction(async (allow: boolean) => {
    const body = allow
      ? {
          allow,
          scopes: [...(scopes ?? new Set(details.data!.scopes.map((s) => s.scope)))],
          collections: collections ? [...collections] : null,
          workflows: workflows ? [...workflows] : null,
        }
      : { allow };
    const { redirectTo } = await api<{ redirectTo: string }>('POST', `${base}/decision`, { body });
    location.assign(redirectTo);
  });

  const shown = details.data;
  if (!shown) return <main>{details.error ? <ErrorBox error={details.error} /> : <p class="muted loading">Loading…</p>}</main>;
  const granted = scopes ?? new Set(shown.scopes.map((s) => s.scope));
  const toggle = (scope: string, on: boolean) => {
    const next = new Set(granted);
    if (on) next.add(scope);
    else next.delete(scope);
    setScopes(next);
  };
  const clientName = shown.client.name ?? shown.client.id;
  return (
    <main class="consent">
      <h1>Connect {clientName}</h1>
      <p>
        <strong>{clientName}</strong> asks to use this service for you through MCP
        {shown.redirectUri ? (
          <>
            {' '}
            and will be sent back to <code>{new URL(shown.redirectUri).origin}</code>
          </>
        ) : null}
        . It can never do more than your own account may.
      </p>
      {shown.client.uri && (
        <p class="muted">
          Client: <code>{shown.client.uri}</code>
        </p>
      )}
      {shown.scopes.length === 0 ? (
        <p>This client asked for no access this service grants.</p>
      ) : (
        <fieldset>
          <legend>It may</legend>
          {shown.scopes.map(({ scope, description }) => (
            <label key={scope}>
              <input type="checkbox" checked={granted.has(scope)} onChange={(e) => toggle(scope, e.currentTarget.checked)} /> {description}{' '}
              <code class="muted">{scope}</code>
            </label>
          ))}
        </fieldset>
      )}
      {(granted.has('collections:read') || granted.has('collections:write')) && (
        <Narrowing
          legend="Collections"
          allLabel="All my collections"
          items={shown.collections}
          idOf={(c) => c.id}
          labelOf={(c) => c.name}
          chosen={collections}
          onChange={setCollections}
        />
      )}
      {granted.has('workflows:run') && (
        <Narrowing
          legend="Workflows"
          allLabel="All my workflows offered as tools"
          items={shown.workflows}
          idOf={(w) => w.workflowId}
          labelOf={(w) => w.title || w.name}
          chosen={workflows}
          onChange={setWorkflows}
        />
      )}
      <ErrorBox error={decide.error} />
      <div class="actions">
        <button type="button" disabled={decide.busy || granted.size === 0} onClick={() => decide.run(true)}>
          Allow
        </button>
        <button type="button" class="secondary" disabled={decide.busy} onClick={() => decide.run(false)}>
          Deny
        </button>
      </div>
    </main>
  );
}
