import { Members, roleHelp } from '../members';
import { useState } from 'preact/hooks';
import { api, encode, query } from '../api-client';
import { CREDENTIAL_TYPES, type Credential, type CredentialType, type CredentialUsage, type Page } from '../api-types';
import { Link, setQuery, useLocation } from '../router';
import { ErrorBox, Pager, Section, Time, useAction, useLoad } from '../ui';

const LIMIT = 20;

interface FieldSpec {
  name: string;
  label: string;
  optional?: boolean;
}

/** The fields of each type (docs/workflows.md, Credentials): settings are visible, secrets write-only. */
const FIELDS: Record<CredentialType, { settings: FieldSpec[]; secrets: FieldSpec[]; sends: string }> = {
  bearer: { settings: [], secrets: [{ name: 'token', label: 'Token' }], sends: 'Authorization: Bearer <token>' },
  basic: {
    settings: [{ name: 'username', label: 'Username' }],
    secrets: [{ name: 'password', label: 'Password' }],
    sends: 'Authorization: Basic …',
  },
  header: {
    settings: [{ name: 'name', label: 'Header name' }],
    secrets: [{ name: 'value', label: 'Header value' }],
    sends: 'the header name: value',
  },
  query: {
    settings: [{ name: 'name', label: 'Query parameter name' }],
    secrets: [{ name: 'value', label: 'Query parameter value' }],
    sends: 'the query parameter name=value',
  },
  'oauth2-client-credentials': {
    settings: [
      { name: 'tokenUrl', label: 'Token URL' },
      { name: 'clientId', label: 'Client id' },
      { name: 'scope', label: 'Scope', optional: true },
      { name: 'audience', label: 'Audience', optional: true },
    ],
    secrets: [{ name: 'clientSecret', label: 'Client secret' }],
    sends: 'Authorization: Bearer <access token>, fetched from the token URL and refreshed',
  },
};

/** The non-empty values: the server refuses an empty setting or secret. */
const filled = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));

/**
 * Credentials: typed secrets the service injects into a node's request at send time. Their
 * secret values are write-only: typed once (or again to rotate), never shown, never returned.
 */
export function CredentialsPage() {
  const { params } = useLocation();
  const offset = Number(params.get('offset') ?? 0) || 0;
  const open = params.get('open') ?? '';
  const list = useLoad(() => api<Page<Credential>>('GET', `/api/v1/credentials${query({ offset, limit: LIMIT })}`), [offset]);
  const show = (id: string | undefined) => setQuery({ offset: offset || undefined, open: id });
  const opened = list.data?.items.find((c) => c.id === open);

  return (
    <main>
      <h1>Credentials</h1>
      <p class="muted">
        A credential is injected into a node's request when it is sent (http-request, chat-completion): no expression, Code node, run
        record, error or log ever holds its value. Its secret fields are write-only: type them when creating it, or again to rotate it; they
        are never shown again.
      </p>
      <CreateCredential
        onCreated={(credential) => {
          void list.reload();
          show(credential.id);
        }}
      />
      <Section title="Your credentials">
        <ErrorBox error={list.error} />
        {list.data && list.data.items.length === 0 && <p class="muted">No credentials yet.</p>}
        {list.data && list.data.items.length > 0 && (
          <div class="table-scroll">
            <table aria-label="Credentials">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Type</th>
                  <th>Settings</th>
                  <th>Your role</th>
                  <th>Updated</th>
                  <th>
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((c) => (
                  <tr key={c.id}>
                    <td>
                      {c.name}
                      <div class="muted small">
                        <code>{c.id}</code>
                      </div>
                    </td>
                    <td>{c.type}</td>
                    <td class="small">
                      {Object.entries(c.settings).map(([k, v]) => (
                        <div key={k}>
                          {k}: <code>{v}</code>
                        </div>
                      ))}
                      <div class="muted">secret: {c.secretFields.join(', ') || '—'} (hidden)</div>
                    </td>
                    <td>{c.role}</td>
                    <td>
                      <Time iso={c.updatedAt} />
                    </td>
                    <td class="row-actions">
                      <button
                        type="button"
                        class="link"
                        onClick={() => show(open === c.id ? undefined : c.id)}
                        aria-label={`${open === c.id ? 'Close' : 'Open'} ${c.name}`}
                      >
                        {open === c.id ? 'Close' : 'Open'}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {list.data && (
          <Pager offset={offset} limit={LIMIT} total={list.data.total} onChange={(o) => setQuery({ offset: o || undefined })} />
        )}
      </Section>
      {opened && (
        <CredentialDetails
          key={opened.id}
          credential={opened}
          onChanged={() => void list.reload()}
          onDeleted={() => {
            show(undefined);
            void list.reload();
          }}
        />
      )}
    </main>
  );
}

function FieldInputs({
  specs,
  values,
  secret,
  onChange,
  idPrefix,
}: {
  specs: FieldSpec[];
  values: Record<string, string>;
  secret: boolean;
  onChange: (values: Record<string, string>) => void;
  idPrefix: string;
}) {
  return (
    <>
      {specs.map((f) => (
        <label key={`${idPrefix}-${f.name}`}>
          {f.label}
          {f.optional ? <span class="muted"> (optional)</span> : null}
          <input
            type={secret ? 'password' : 'text'}
            autocomplete={secret ? 'new-password' : 'off'}
            value={values[f.name] ?? ''}
            required={!f.optional}
            onInput={(e) => onChange({ ...values, [f.name]: e.currentTarget.value })}
          />
        </label>
      ))}
    </>
  );
}

function CreateCredential({ onCreated }: { onCreated: (credential: Credential) => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState<CredentialType>('bearer');
  const [settings, setSettings] = useState<Record<string, string>>({});
  const [secrets, setSecrets] = useState<Record<string, string>>({});
  const create = useAction(async () => {
    const created = await api<Credential>('POST', '/api/v1/credentials', {
      body: { name, type, settings: filled(settings), secrets: filled(secrets) },
    });
    setName('');
    setSettings({});
    // The secret is gone from the page once sent: it is never shown again.
    setSecrets({});
    onCreated(created);
  });
  const fields = FIELDS[type];
  return (
    <Section title="New credential">
      <form
        class="credential-form"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <div class="columns">
          <label>
            Name
            <input value={name} required maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Type
            <select
              value={type}
              onChange={(e) => {
                setType(e.currentTarget.value as CredentialType);
                setSettings({});
                setSecrets({});
              }}
            >
              {CREDENTIAL_TYPES.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </label>
        </div>
        <p class="muted small">Sends {fields.sends}.</p>
        <FieldInputs specs={fields.settings} values={settings} secret={false} onChange={setSettings} idPrefix={`new-${type}-settings`} />
        <FieldInputs specs={fields.secrets} values={secrets} secret onChange={setSecrets} idPrefix={`new-${type}-secrets`} />
        <p class="secret-note">Secret fields are write-only: after creation nobody, you included, can read them back.</p>
        <div class="actions">
          <button type="submit" disabled={create.busy}>
            Create credential
          </button>
        </div>
        <ErrorBox error={create.error} />
      </form>
    </Section>
  );
}

function CredentialDetails({ credential, onChanged, onDeleted }: { credential: Credential; onChanged: () => void; onDeleted: () => void }) {
  const base = `/api/v1/credentials/${encode(credential.id)}`;
  const fields = FIELDS[credential.type];
  const mayEdit = credential.role === 'editor' || credential.role === 'owner';
  const [name, setName] = useState(credential.name);
  const [settings, setSettings] = useState<Record<string, string>>({ ...credential.settings });
  const [secrets, setSecrets] = useState<Record<string, string>>({});
  const [notice, setNotice] = useState('');
  const usage = useLoad(() => api<CredentialUsage>('GET', `${base}/usage`), [base]);

  const save = useAction(async () => {
    await api('PATCH', base, { body: { name, settings: filled(settings) } });
    setNotice('Saved.');
    onChanged();
  });
  const rotate = useAction(async () => {
    await api('PATCH', base, { body: { secrets: filled(secrets) } });
    setSecrets({});
    setNotice('Rotated: nodes that use it send the new secret from their next request.');
    onChanged();
  });

  return (
    <Section title={`Credential ${credential.name}`}>
      <p class="muted small">
        <code>{credential.id}</code> · {credential.type} · your role: {credential.role} ({roleHelp('credential', credential.role)}) ·
        created <Time iso={credential.createdAt} />
      </p>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {mayEdit ? (
        <>
          <form
            class="credential-form"
            aria-label="Rename and settings"
            onSubmit={(e) => {
              e.preventDefault();
              void save.run();
            }}
          >
            <h3>Name and settings</h3>
            <label>
              Name
              <input value={name} required maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
            </label>
            <FieldInputs specs={fields.settings} values={settings} secret={false} onChange={setSettings} idPrefix="edit-settings" />
            <div class="actions">
              <button type="submit" disabled={save.busy}>
                Save
              </button>
            </div>
            <ErrorBox error={save.error} />
          </form>
          <form
            class="credential-form"
            aria-label="Rotate"
            onSubmit={(e) => {
              e.preventDefault();
              void rotate.run();
            }}
          >
            <h3>Rotate</h3>
            <p class="muted small">
              The stored secret ({credential.secretFields.join(', ')}) is never shown. Type a new one to replace it.
            </p>
            <FieldInputs specs={fields.secrets} values={secrets} secret onChange={setSecrets} idPrefix="rotate-secrets" />
            <div class="actions">
              <button type="submit" disabled={rotate.busy}>
                Rotate secret
              </button>
            </div>
            <ErrorBox error={rotate.error} />
          </form>
        </>
      ) : (
        <p class="muted">Your role lets you use this credential in nodes; an editor or owner changes it.</p>
      )}

      <h3>Where it is used</h3>
      <ErrorBox error={usage.error} />
      {usage.data && usage.data.items.length === 0 && usage.data.hidden === 0 && <p class="muted">No workflow names it.</p>}
      {usage.data && (
        <ul aria-label="Workflows that use it">
          {usage.data.items.map((u) => (
            <li key={u.workflowId}>
              <Link href={`/workflows/${u.workflowId}`}>{u.name}</Link>{' '}
              <span class="muted small">
                {[u.inDraft ? 'draft' : '', u.inActiveVersion ? 'active version' : ''].filter(Boolean).join(', ')}
              </span>
            </li>
          ))}
          {usage.data.hidden > 0 && <li class="muted">{usage.data.hidden} workflow(s) you cannot see</li>}
        </ul>
      )}

      <Members
        base={base}
        noun="credential"
        name={credential.name}
        role={credential.role}
        after="/credentials"
        consequence="Nodes that name it fail until given another."
        onDeleted={onDeleted}
      />
    </Section>
  );
}
