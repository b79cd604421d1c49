import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError, ErrorCode, FieldError, isAppError } from '../common/app-error';
import { FORM_MEDIA_TYPE } from '../common/media-types';
import { APPROVAL_PAGE_PATH } from './approval-links';
import { ApprovalsService, Decision, DECISIONS, PendingApproval } from './approvals.service';
import { MAX_COMMENT_CHARS } from './approvals.dto';

const STYLE = `
body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a;line-height:1.5}
h1{font-size:1.4rem}.summary{white-space:pre-wrap;background:#f4f4f5;border-left:4px solid #3f3f46;padding:.75rem 1rem}
label{display:block;font-weight:600;margin-top:1rem}.hint{font-weight:400;color:#3f3f46;font-size:.9rem}
input[type=text],input[type=number],select,textarea{width:100%;box-sizing:border-box;padding:.4rem;font:inherit;border:1px solid #52525b;border-radius:4px}
textarea{min-height:4rem}.actions{margin-top:1.5rem;display:flex;gap:1rem}
button{font:inherit;padding:.5rem 1.25rem;border-radius:4px;border:1px solid #18181b;cursor:pointer}
.approve{background:#166534;color:#fff}.reject{background:#fff;color:#991b1b;border-color:#991b1b}
.errors{background:#fef2f2;border:1px solid #991b1b;padding:.5rem 1rem;color:#7f1d1d}.meta{color:#3f3f46;font-size:.9rem}
`;

/**
 * No script at all; the one inline style is allowed by its hash. The link's token is in the path:
 * no referrer leaves the page, nothing caches it, and no other site may frame it.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The page a signed approval link opens: `GET /approvals/<token>` shows the summary and a form
 * for the fields (from the node's JSON Schema), `POST` decides once. Server-rendered, no script:
 * it works in any mail client's browser. Registered on fastify directly, like the console: public
 * (the token is the credential) and outside the OpenAPI document; errors are pages too.
 */
export function setupApprovalPages(app: NestFastifyApplication, logger: Logger): void {
  const approvals = app.get(ApprovalsService);
  const log = logger.child({ component: 'approvals' });
  void app.register(async (scope: FastifyInstance) => {
    // A wildcard, not a `:token` parameter: fastify caps a parameter at 100 characters, a token is longer.
    scope.get(`${APPROVAL_PAGE_PATH}/*`, async (request, reply) => {
      const token = tokenOf(request);
      try {
        const pending = await approvals.pendingByLink(token);
        return send(reply, 200, formPage(pending, {}, []));
      } catch (error) {
        return send(reply, ...errorPage(error, request, log));
      }
    });
    scope.post(`${APPROVAL_PAGE_PATH}/*`, { config: { consumes: FORM_MEDIA_TYPE } }, async (request, reply) => {
      const token = tokenOf(request);
      const form = formOf(request.body);
      let pending: PendingApproval;
      try {
        pending = await approvals.pendingByLink(token);
      } catch (error) {
        return send(reply, ...errorPage(error, request, log));
      }
      const decision = form.decision as Decision;
      const comment = form.comment?.trim() ? form.comment.trim() : undefined;
      const problems: FieldError[] = [];
      if (!DECISIONS.includes(decision)) problems.push({ field: 'decision', reason: 'must be approved or rejected' });
      if (comment && comment.length > MAX_COMMENT_CHARS)
        problems.push({ field: 'comment', reason: `must be at most ${MAX_COMMENT_CHARS} characters` });
      if (problems.length) return send(reply, 400, formPage(pending, form, problems));
      try {
        const decided = await approvals.decideByLink(token, {
          decision,
          ...(pending.fields ? { fields: readFields(pending.fields, form) } : {}),
          ...(comment ? { comment } : {}),
        });
        return send(
          reply,
          200,
          page(
            decided.decision === 'approved' ? 'Approved' : 'Rejected',
            `<p>Your decision was recorded at ${esc(decided.decidedAt)}: the run goes on. This link cannot be used again.</p>`,
          ),
        );
      } catch (error) {
        if (isAppError(error) && error.code === ErrorCode.VALIDATION_FAILED)
          return send(reply, 400, formPage(pending, form, fieldErrors(error)));
        return send(reply, ...errorPage(error, request, log));
      }
    });
  });
}

/** A request's URL as logs keep it: an approval link's token decides for whoever holds it, so it never reaches a log line. */
export function withoutApprovalToken(url: string): string {
  return url.startsWith(`${APPROVAL_PAGE_PATH}/`) ? `${APPROVAL_PAGE_PATH}/[REDACTED]` : url;
}

const tokenOf = (request: FastifyRequest): string => (request.params as { '*': string })['*'];

function send(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .status(status)
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(html);
}

const TITLES: Partial<Record<ErrorCode, string>> = {
  [ErrorCode.NOT_FOUND]: 'Unknown approval link',
  [ErrorCode.CONFLICT]: 'Already decided',
  [ErrorCode.GONE]: 'This approval link expired',
};

function errorPage(error: unknown, request: FastifyRequest, log: Logger): [number, string] {
  if (!isAppError(error) || error.httpStatus >= 500) {
    log.error({ err: error, requestId: request.id }, 'approval page failed');
    return [500, page('Something went wrong', `<p>The decision could not be taken. Try again later (request ${esc(request.id)}).</p>`)];
  }
  return [error.httpStatus, page(TITLES[error.code] ?? 'This link cannot be used', `<p>${userText(error.message)}</p>`)];
}

function fieldErrors(error: AppError): FieldError[] {
  const details = error.details as { fields?: FieldError[] } | FieldError[] | undefined;
  const list = Array.isArray(details) ? details : details?.fields;
  return list?.length ? list : [{ field: 'fields', reason: error.message }];
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${esc(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${esc(title)}</h1>${body}</main></body></html>`;
}

interface PropertySchema {
  type?: string | string[];
  title?: string;
  description?: string;
  enum?: unknown[];
}

function properties(schema: Record<string, unknown>): [string, PropertySchema][] {
  const props = schema.properties;
  return typeof props === 'object' && props !== null ? (Object.entries(props) as [string, PropertySchema][]) : [];
}

const typeOf = (prop: PropertySchema): string =>
  Array.isArray(prop.type) ? (prop.type.find((t) => t !== 'null') ?? 'string') : (prop.type ?? 'string');

function formPage(pending: PendingApproval, form: Record<string, string>, problems: FieldError[]): string {
  const required = new Set(Array.isArray(pending.fields?.required) ? (pending.fields.required as string[]) : []);
  const inputs = pending.fields
    ? properties(pending.fields)
        .map(([name, prop], index) => fieldInput(`field-${index}`, name, prop, required.has(name), form[`f.${name}`]))
        .join('')
    : '';
  const errors = problems.length
    ? `<div class="errors" role="alert"><p>Please correct:</p><ul>${problems.map((p) => `<li>${userText(p.field)}: ${userText(p.reason)}</li>`).join('')}</ul></div>`
    : '';
  const workflow = pending.workflowName
    ? `Workflow <strong>${userText(pending.workflowName)}</strong>, run ${esc(pending.runId)}`
    : `Run ${esc(pending.runId)}`;
  return page(
    'Approval requested',
    `<p class="meta">${workflow}. Decide before ${esc(pending.expiresAt)}; this link works once.</p>
<div class="summary">${userText(pending.summary)}</div>${errors}
<form method="post">${inputs}
<label for="comment">Comment <span class="hint">(optional)</span></label><textarea id="comment" name="comment" maxlength="${MAX_COMMENT_CHARS}">${esc(form.comment ?? '')}</textarea>
<div class="actions"><button class="approve" type="submit" name="decision" value="approved">Approve</button><button class="reject" type="submit" name="decision" value="rejected">Reject</button></div>
</form>`,
  );
}

function fieldInput(id: string, name: string, prop: PropertySchema, required: boolean, value: string | undefined): string {
  const label = `<label for="${id}">${userText(prop.title ?? name)}${required ? '' : ' <span class="hint">(optional)</span>'}${prop.description ? ` <span class="hint">${userText(prop.description)}</span>` : ''}</label>`;
  const attrs = `id="${id}" name="f.${esc(name)}"${required ? ' required' : ''}`;
  const type = typeOf(prop);
  if (Array.isArray(prop.enum)) {
    const options = prop.enum
      .map(
        // An option holds text only: isolated with FSI ... PDI rather than <bdi>.
        (option) =>
          `<option value="${esc(String(option))}"${String(option) === value ? ' selected' : ''}>${esc(`\u2068${String(option)}\u2069`)}</option>`,
      )
      .join('');
    return `${label}<select ${attrs}>${required ? '' : '<option value=""></option>'}${options}</select>`;
  }
  if (type === 'boolean')
    return `<label for="${id}"><input type="checkbox" id="${id}" name="f.${esc(name)}" value="true"${value === 'true' ? ' checked' : ''}> ${userText(prop.title ?? name)}</label>`;
  if (type === 'number' || type === 'integer')
    return `${label}<input type="number" step="${type === 'integer' ? '1' : 'any'}" ${attrs} value="${esc(value ?? '')}">`;
  if (type === 'object' || type === 'array') return `${label}<textarea ${attrs} placeholder="JSON">${esc(value ?? '')}</textarea>`;
  return `${label}<input type="text" ${attrs} value="${esc(value ?? '')}">`;
}

/** The form's `f.<name>` entries as the values the schema asks for; what does not convert stays text, for ajv to name. */
function readFields(schema: Record<string, unknown>, form: Record<string, string>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, prop] of properties(schema)) {
    const raw = form[`f.${name}`];
    const type = typeOf(prop);
    if (type === 'boolean') {
      fields[name] = raw === 'true';
      continue;
    }
    if (raw === undefined || raw === '') continue;
    if (type === 'number' || type === 'integer') fields[name] = Number.isFinite(Number(raw)) ? Number(raw) : raw;
    else if (type === 'object' || type === 'array') fields[name] = parseJson(raw);
    else fields[name] = raw;
  }
  return fields;
}

/** Repeated names arrive as arrays: the first one counts. */
function formOf(body: unknown): Record<string, string> {
  if (typeof body !== 'object' || body === null) return {};
  const entries = Object.entries(body as Record<string, unknown>).map(([name, value]) => [name, Array.isArray(value) ? value[0] : value]);
  return Object.fromEntries(entries.filter(([, value]) => typeof value === 'string')) as Record<string, string>;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Text a user wrote (a workflow's name, a summary, a field's title, a message that quotes them),
 * escaped and isolated: a right-to-left override (U+202E) in it cannot reverse the page's own text
 * after it. Anything that is not text (a schema's `title: 5`) is shown as its text.
 */
function userText(value: unknown): string {
  return `<bdi>${esc(String(value))}</bdi>`;
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
