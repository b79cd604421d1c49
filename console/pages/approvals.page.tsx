import { useState } from 'preact/hooks';
import { api } from '../api-client';
import type { ApprovalDecision, JsonSchema, PendingApproval } from '../api-types';
import { Link } from '../router';
import { ErrorBox, Section, Time, useAction, useLoad, usePolling, UserText } from '../ui';

/** The approvals waiting for a decision the signed-in user may take (editor role), oldest first. */
export function ApprovalsPage() {
  const inbox = useLoad(() => api<{ items: PendingApproval[] }>('GET', '/api/v1/approvals'), []);
  const [decided, setDecided] = useState<ApprovalDecision[]>([]);
  usePolling(inbox.reload, 5000, true);
  const items = inbox.data?.items ?? [];
  return (
    <main>
      <h1>Approvals</h1>
      <Section title="Waiting for a decision">
        <ErrorBox error={inbox.error} />
        {decided.length > 0 && (
          <p class="muted" role="status">
            {decided.map((d) => `Run ${d.runId}: ${d.decision}.`).join(' ')}
          </p>
        )}
        {inbox.data && items.length === 0 && <p class="muted">Nothing waits for your decision.</p>}
        {items.map((item) => (
          <ApprovalCard
            key={`${item.runId}/${item.nodeId}`}
            item={item}
            onDecided={(decision) => {
              setDecided((list) => [decision, ...list].slice(0, 5));
              void inbox.reload();
            }}
          />
        ))}
      </Section>
    </main>
  );
}

function ApprovalCard({ item, onDecided }: { item: PendingApproval; onDecided: (decision: ApprovalDecision) => void }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [comment, setComment] = useState('');
  const decide = useAction(async (decision: 'approved' | 'rejected') => {
    const body = {
      decision,
      ...(item.fields ? { fields: fieldsOf(item.fields, values) } : {}),
      ...(comment.trim() ? { comment: comment.trim() } : {}),
    };
    const path = `/api/v1/runs/${encodeURIComponent(item.runId)}/approvals/${encodeURIComponent(item.nodeId)}`;
    onDecided(await api<ApprovalDecision>('POST', path, { body }));
  });
  const id = (name: string) => `approval-${item.runId}-${item.nodeId}-${name}`;
  const required = new Set<string>(Array.isArray(item.fields?.required) ? item.fields.required : []);
  return (
    <article class="approval" aria-label={`Approval ${item.nodeId} of run ${item.runId}`}>
      <p class="approval-summary">
        <UserText text={item.summary} />
      </p>
      <p class="muted small">
        <UserText text={item.workflowName ?? item.workflowId} /> · run <Link href={`/runs/${item.runId}`}>{item.runId}</Link> · node{' '}
        <code>{item.nodeId}</code> · waiting since <Time iso={item.createdAt} /> · expires <Time iso={item.expiresAt} />
      </p>
      <form class="stack" onSubmit={(e) => e.preventDefault()}>
        {Object.entries(propertiesOf(item.fields)).map(([name, prop]) =>
          typeOf(prop) === 'boolean' ? (
            <label key={name} class="check" for={id(`f-${name}`)}>
              <input
                id={id(`f-${name}`)}
                type="checkbox"
                checked={values[name] === 'true'}
                onChange={(e) => setValues({ ...values, [name]: String(e.currentTarget.checked) })}
              />
              <span>
                {prop.title ?? name}
                {prop.description && <span class="muted small"> {prop.description}</span>}
              </span>
            </label>
          ) : (
            <label key={name} for={id(`f-${name}`)}>
              <span>
                {prop.title ?? name}
                {!required.has(name) && <span class="muted"> (optional)</span>}
                {prop.description && <span class="muted small"> {prop.description}</span>}
              </span>
              <input
                id={id(`f-${name}`)}
                type={typeOf(prop) === 'number' || typeOf(prop) === 'integer' ? 'number' : 'text'}
                value={values[name] ?? ''}
                onInput={(e) => setValues({ ...values, [name]: e.currentTarget.value })}
              />
            </label>
          ),
        )}
        <label for={id('comment')}>
          <span>
            Comment <span class="muted">(optional)</span>
          </span>
          <textarea id={id('comment')} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
        </label>
        <div class="actions">
          <button type="button" disabled={decide.busy} onClick={() => void decide.run('approved')}>
            Approve
          </button>
          <button type="button" class="secondary" disabled={decide.busy} onClick={() => void decide.run('rejected')}>
            Reject
          </button>
        </div>
      </form>
      <ErrorBox error={decide.error} />
    </article>
  );
}

function propertiesOf(schema: JsonSchema | null): Record<string, JsonSchema> {
  return schema && typeof schema.properties === 'object' && schema.properties !== null ? schema.properties : {};
}

const typeOf = (prop: JsonSchema): string =>
  Array.isArray(prop.type) ? (prop.type.find((t: string) => t !== 'null') ?? 'string') : (prop.type ?? 'string');

/** What was typed, as the schema's types; what does not convert is sent as typed, for the server to name. */
function fieldsOf(schema: JsonSchema, values: Record<string, string>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(propertiesOf(schema))) {
    const raw = values[name];
    const type = typeOf(prop);
    if (type === 'boolean') fields[name] = raw === 'true';
    else if (raw === undefined || raw === '') continue;
    else if (type === 'number' || type === 'integer') fields[name] = Number.isFinite(Number(raw)) ? Number(raw) : raw;
    else if (type === 'object' || type === 'array') {
      try {
        fields[name] = JSON.parse(raw);
      } catch {
        fields[name] = raw;
      }
    } else fields[name] = raw;
  }
  return fields;
}
