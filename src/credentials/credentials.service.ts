import { Injectable } from '@nestjs/common';
import { AccessPolicy } from '../auth/access-policy.service';
import type { Role } from '../domain/membership.model';
import { Principal } from '../auth/principal';
import { AppError, ErrorCode, FieldError } from '../common/app-error';
import { newId } from '../common/ids';
import { Page, PageRequest } from '../common/page';
import { SafeFetch } from '../common/safe-fetch';
import { SecretCipher } from '../common/secret-cipher';
import { CredentialUseContext, NodeCredentials, ResolvedCredential } from '../engine/node-credentials.port';
import { NodeConfigurationError } from '../sdk';
import { CredentialStore } from '../domain/credential-store.port';
import { MembershipStore } from '../domain/membership-store.port';
import { WorkflowStore } from '../domain/workflow-store.port';
import { Credential, CREDENTIAL_FIELDS, CredentialType, SECRET_DESTINATIONS } from '../domain/credential.model';
import { OAuth2Tokens, resolvedCredential } from './credential-injection';
import { CreateCredentialDto, credentialUseView, credentialView, UpdateCredentialDto } from './credentials.dto';

export type CredentialView = ReturnType<typeof credentialView>;

/**
 * Typed credentials, sealed at rest and never returned once written. Roles as for any shared
 * resource: viewer uses it (selects it in a node), editor changes or rotates it, owner shares and
 * deletes it. A run uses one with the rights of the user it acts as.
 */
@Injectable()
export class CredentialsService extends NodeCredentials {
  private readonly tokens: OAuth2Tokens;

  constructor(
    private readonly credentials: CredentialStore,
    private readonly workflows: WorkflowStore,
    private readonly memberships: MembershipStore,
    private readonly access: AccessPolicy,
    private readonly cipher: SecretCipher,
    fetcher: SafeFetch,
  ) {
    super();
    this.tokens = new OAuth2Tokens(fetcher);
  }

  async create(principal: Principal, dto: CreateCredentialDto): Promise<CredentialView> {
    const settings = checkedFields(dto.type, dto.settings ?? {}, dto.secrets);
    const id = newId('crd');
    const now = new Date();
    const credential: Credential = {
      id,
      name: dto.name,
      type: dto.type,
      ownerId: principal.userId,
      settings,
      allowedHosts: [...new Set(dto.allowedHosts ?? [])],
      sealed: this.seal(id, dto.secrets),
      createdAt: now,
      updatedAt: now,
    };
    await this.credentials.create(credential);
    return credentialView(credential, 'owner', Object.keys(dto.secrets));
  }

  async list(principal: Principal, page: PageRequest): Promise<Page<CredentialView>> {
    const result = await this.credentials.listVisible(principal.userId, page);
    return { items: result.items.map((c) => credentialView(c, c.role, this.secretFields(c))), total: result.total };
  }

  async get(principal: Principal, id: string): Promise<CredentialView> {
    const role = await this.access.require(principal, 'credential', id, 'viewer');
    const credential = await this.load(id);
    return credentialView(credential, role, this.secretFields(credential));
  }

  /**
   * Rename, change its settings or allowed hosts, or rotate it (new secrets replace the old ones as
   * a set). A change of where a secret goes (a setting of SECRET_DESTINATIONS, a host allowed that
   * was not) needs the secrets in the same request: an editor who may not read the secret must not
   * be able to send it somewhere they read.
   */
  async update(principal: Principal, id: string, dto: UpdateCredentialDto): Promise<CredentialView> {
    const role = await this.access.require(principal, 'credential', id, 'editor');
    const current = await this.load(id);
    const secrets = dto.secrets ?? this.open(current);
    const settings = checkedFields(current.type, dto.settings ?? current.settings, secrets);
    const allowedHosts = dto.allowedHosts ? [...new Set(dto.allowedHosts)] : current.allowedHosts;
    if (!dto.secrets) {
      const problems: FieldError[] = [
        ...(SECRET_DESTINATIONS[current.type] ?? [])
          .filter((name) => settings[name] !== current.settings[name])
          .map((name) => ({ field: `secrets`, reason: `are needed again to change settings.${name}: it decides where a secret is sent` })),
        ...allowedHosts
          .filter((host) => !current.allowedHosts.includes(host))
          .map((host) => ({ field: 'secrets', reason: `are needed again to allow the host ${host}: its values would be sent there` })),
      ];
      if (problems.length) throw AppError.validation(problems, 'Changing where a secret goes needs the secrets again');
    }
    const updatedAt = new Date();
    const changes = {
      name: dto.name ?? current.name,
      settings,
      allowedHosts,
      sealed: dto.secrets ? this.seal(id, dto.secrets) : current.sealed,
      updatedAt,
    };
    if (!(await this.credentials.update(id, changes))) throw AppError.notFound('credential', id);
    return credentialView({ ...current, ...changes }, role, Object.keys(secrets));
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.access.require(principal, 'credential', id, 'owner');
    if (!(await this.credentials.delete(id))) throw AppError.notFound('credential', id);
  }

  /** Where it is used: the workflows (drafts or active versions) that name it; those the caller cannot see are only counted. */
  async usage(principal: Principal, id: string) {
    await this.access.require(principal, 'credential', id, 'viewer');
    const uses = await this.workflows.referencing(JSON.stringify(id));
    const visible = await this.memberships.listForUser('workflow', principal.userId);
    const items = uses.filter((use) => visible.has(use.workflowId));
    return { items, hidden: uses.length - items.length };
  }

  /** The credential's type when `userId` may use it (viewer at least); null when it is gone or not theirs to use. */
  async typeFor(userId: string, credentialId: string): Promise<string | null> {
    try {
      await this.access.require({ userId }, 'credential', credentialId, 'viewer');
    } catch (error) {
      if (error instanceof AppError) return null;
      throw error;
    }
    return (await this.credentials.get(credentialId))?.type ?? null;
  }

  /** Its uses, newest first: for its owner only (who, when, which host, what for). */
  async uses(principal: Principal, id: string, page: PageRequest) {
    await this.access.require(principal, 'credential', id, 'owner');
    const result = await this.credentials.listUses(id, page);
    return { items: result.items.map(credentialUseView), total: result.total };
  }

  /**
   * For a run or a dropdown: the credential as `userId` may use it (viewer at least), opened, ready
   * to inject into requests to its allowed hosts only (see hostGuard).
   */
  async resolve(userId: string, credentialId: string, use: CredentialUseContext): Promise<ResolvedCredential> {
    let role: Role;
    try {
      role = await this.access.require({ userId }, 'credential', credentialId, 'viewer');
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      throw new NodeConfigurationError(
        `Credential ${credentialId} cannot be used: the run acts as user ${userId}, who holds no role on it (it may also be gone)`,
        {
          details: { credentialId, code: error.code },
        },
      );
    }
    const credential = await this.credentials.get(credentialId);
    if (!credential)
      throw new NodeConfigurationError(`Credential ${credentialId} is gone`, { details: { credentialId, code: ErrorCode.NOT_FOUND } });
    return resolvedCredential(credential, this.open(credential), this.tokens, this.hostGuard(credential, userId, role, use));
  }

  /**
   * Checks each request's host against the credential's allowed hosts before anything is applied,
   * and records the use (once per host for one resolution, i.e. one run or dropdown). A credential
   * that allows no host yet adopts the host of its owner's first use; anyone else's use is refused
   * and recorded, so the owner sees the host it proposed.
   */
  private hostGuard(credential: Credential, userId: string, role: Role, use: CredentialUseContext): (url: string) => Promise<void> {
    const recorded = new Set<string>();
    let allowedHosts = credential.allowedHosts;
    return async (url) => {
      const host = new URL(url).host.toLowerCase();
      if (allowedHosts.length === 0 && role === 'owner') allowedHosts = await this.adoptHost(credential.id, host);
      const allowed = allowedHosts.includes(host);
      if (!recorded.has(`${allowed}/${host}`)) {
        recorded.add(`${allowed}/${host}`);
        await this.credentials.recordUse({
          credentialId: credential.id,
          userId,
          at: new Date(),
          host,
          kind: use.kind,
          runId: use.runId,
          allowed,
        });
      }
      if (!allowed) {
        throw new NodeConfigurationError(
          `Credential ${credential.id} may be sent to ${allowedHosts.join(', ') || 'no host yet'}, not to ${host}: ` +
            `its editors can allow ${host} (allowedHosts, given with its secrets)`,
          { details: { credentialId: credential.id, host, allowedHosts } },
        );
      }
    };
  }

  /** The owner's first use of a credential that allows no host yet: that host becomes its only one (unless another use came first). */
  private async adoptHost(id: string, host: string): Promise<string[]> {
    const current = await this.load(id);
    if (current.allowedHosts.length > 0) return current.allowedHosts;
    const { name, settings, sealed, updatedAt } = current;
    await this.credentials.update(id, { name, settings, sealed, updatedAt, allowedHosts: [host] });
    return [host];
  }

  private async load(id: string): Promise<Credential> {
    const credential = await this.credentials.get(id);
    if (!credential) throw AppError.notFound('credential', id);
    return credential;
  }

  private seal(id: string, secrets: Record<string, string>): string {
    return this.cipher.encrypt(JSON.stringify(secrets), id);
  }

  private open(credential: Credential): Record<string, string> {
    return JSON.parse(this.cipher.decrypt(credential.sealed, credential.id)) as Record<string, string>;
  }

  private secretFields(credential: Credential): readonly string[] {
    return CREDENTIAL_FIELDS[credential.type].secrets;
  }
}

/** The settings kept for the type, every problem with settings and secrets in one 400. */
function checkedFields(type: CredentialType, settings: Record<string, string>, secrets: Record<string, string>): Record<string, string> {
  const fields = CREDENTIAL_FIELDS[type];
  const problems: FieldError[] = [];
  const known = [...fields.settings, ...(fields.optionalSettings ?? [])];
  for (const name of fields.settings) if (!settings[name]) problems.push({ field: `settings.${name}`, reason: 'is required' });
  for (const name of Object.keys(settings))
    if (!known.includes(name))
      problems.push({
        field: `settings.${name}`,
        reason: `is not a setting of a ${type} credential (settings: ${known.join(', ') || 'none'})`,
      });
  for (const name of fields.secrets) if (!secrets[name]) problems.push({ field: `secrets.${name}`, reason: 'is required' });
  for (const name of Object.keys(secrets))
    if (!fields.secrets.includes(name))
      problems.push({
        field: `secrets.${name}`,
        reason: `is not a secret of a ${type} credential (secrets: ${fields.secrets.join(', ')})`,
      });
  if (type === 'header' && settings.name && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/.test(settings.name)) {
    problems.push({ field: 'settings.name', reason: 'must be an HTTP header name' });
  }
  if (
    type === 'header' &&
    settings.name &&
    ['host', 'content-length', 'transfer-encoding', 'connection'].includes(settings.name.toLowerCase())
  ) {
    problems.push({ field: 'settings.name', reason: 'must not be a header the HTTP client sets itself' });
  }
  if (type === 'oauth2-client-credentials' && settings.tokenUrl) {
    let url: URL | null = null;
    try {
      url = new URL(settings.tokenUrl);
    } catch {
      // reported below
    }
    if (!url || !['http:', 'https:'].includes(url.protocol))
      problems.push({ field: 'settings.tokenUrl', reason: 'must be an http(s) URL' });
  }
  for (const [name, value] of Object.entries(secrets)) {
    if (/[\r\n]/.test(value)) problems.push({ field: `secrets.${name}`, reason: 'must not contain line breaks' });
  }
  if (problems.length) throw AppError.validation(problems, `The ${type} credential has ${problems.length} problem(s)`);
  return Object.fromEntries(known.filter((name) => settings[name] !== undefined).map((name) => [name, settings[name]]));
}
