import { Inject, Injectable, Optional } from '@nestjs/common';
import { VERSION_NUMBER } from '../common/validation';
import type { Logger } from 'pino';
import { Principal } from '../auth/principal';
import { AppError, ErrorCode } from '../common/app-error';
import { ROOT_LOGGER } from '../common/logger';
import { NodeCollectionsProvider, UnavailableCollectionsProvider } from '../engine/node-collections.port';
import { NodeRegistry } from '../engine/node-registry';
import { SafeFetch } from '../common/safe-fetch';
import { NodeCredentials, UnavailableCredentials } from '../engine/node-credentials.port';
import { nodeHttpClient } from '../engine/node-http-client';
import { nodeMcpClients } from '../model-and-tool-servers/mcp-clients/node-mcp-clients';
import { Redactor } from '../engine/redactor';
import { nodeFailure } from '../engine/node-failure';
import { ParameterOption } from '../sdk';

/** How long a parameter's `loadOptions` may take before the caller gets a 504. */
export const NODE_OPTIONS_TIMEOUT_MS = Symbol('NODE_OPTIONS_TIMEOUT_MS');
const DEFAULT_TIMEOUT_MS = 15_000;

/**
 * Dynamic options of node parameters (`@Parameter({ loadOptions })`) for the builder's dropdowns:
 * the plugin's function runs as the user asking, with the collections that user may see.
 */
@Injectable()
export class NodeOptionsService {
  private readonly logger: Logger;
  private readonly collections: NodeCollectionsProvider;

  constructor(
    private readonly registry: NodeRegistry,
    @Inject(ROOT_LOGGER) logger: Logger,
    @Optional() collections?: NodeCollectionsProvider,
    @Optional() @Inject(NODE_OPTIONS_TIMEOUT_MS) private readonly timeoutMs: number = DEFAULT_TIMEOUT_MS,
    @Optional() private readonly fetcher?: SafeFetch,
    @Optional() private readonly credentials?: NodeCredentials,
  ) {
    this.logger = logger.child({ component: 'node-options' });
    this.collections = collections ?? new UnavailableCollectionsProvider();
  }

  /** `parameters`: the node's other parameters as the builder holds them, as JSON text (checked to be an object). */
  async options(
    principal: Principal,
    type: string,
    version: string,
    parameter: string,
    parameters?: string,
  ): Promise<{ items: ParameterOption[] }> {
    const others = parameters === undefined ? {} : JSON.parse(parameters);
    if (typeof others !== 'object' || others === null || Array.isArray(others)) {
      throw AppError.validation([{ field: 'parameters', reason: 'must be a JSON object' }]);
    }
    const node = VERSION_NUMBER.test(version) ? this.registry.get(type, Number(version)) : undefined;
    if (!node) throw AppError.notFound('node type', `${type}@${version}`);
    if (!node.parameterNames.has(parameter)) throw AppError.notFound(`parameter of ${type}@${version}`, parameter);
    const loadOptions = node.optionLoaders.get(parameter);
    if (!loadOptions) {
      throw new AppError(
        ErrorCode.NOT_FOUND,
        `Parameter ${parameter} of ${type}@${version} has no dynamic options: its @Parameter() declares no loadOptions`,
      );
    }

    const about = { type, version: node.definition.version, parameter, userId: principal.userId };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    let listed: unknown;
    try {
      listed = await Promise.race([
        Promise.resolve().then(() =>
          loadOptions({
            collections: this.collections.forUser(principal.userId),
            parameters: Object.freeze({ ...others }),
            mcp: this.mcpFor(principal, controller.signal),
            signal: controller.signal,
          }),
        ),
        new Promise<never>((_, reject) =>
          controller.signal.addEventListener(
            'abort',
            () => reject(new AppError(ErrorCode.TIMEOUT, `Listing the options of ${parameter} took longer than ${this.timeoutMs} ms`)),
            { once: true },
          ),
        ),
      ]);
    } catch (error) {
      throw this.failure(error, about);
    } finally {
      clearTimeout(timer);
    }

    const problem = optionsProblem(listed);
    if (problem) {
      this.logger.error({ ...about, source: node.source, problem }, 'loadOptions returned something that is not a list of options');
      throw new AppError(ErrorCode.INTERNAL, 'loadOptions returned malformed options');
    }
    return {
      items: (listed as ParameterOption[]).map(({ value, label, description }) => ({
        value,
        label,
        ...(description !== undefined ? { description } : {}),
      })),
    };
  }

  /** Outside MCP servers as the user asking reaches them: the outbound guard, and only the credentials they may use. */
  private mcpFor(principal: Principal, signal: AbortSignal) {
    const credentials = this.credentials ?? new UnavailableCredentials();
    let masks = Redactor.NONE;
    const fetcher = this.fetcher ?? {
      fetch: () => Promise.reject(new AppError(ErrorCode.UNAVAILABLE, 'Outbound HTTP is not available here')),
    };
    const http = nodeHttpClient(fetcher, signal, {
      credential: (id) => credentials.resolve(principal.userId, id, { kind: 'dropdown', runId: null }),
      reveal: (secrets) => (masks = masks.with(secrets)),
      redactor: () => masks,
    });
    return nodeMcpClients(http);
  }

  /** Typed failures keep their meaning for the caller, as in a run; anything else is the plugin's bug, told only to the log. */
  private failure(error: unknown, about: Record<string, unknown>): AppError {
    const failure = nodeFailure(error);
    if (failure) {
      this.logger.warn({ ...about, code: failure.code, reason: failure.message }, 'loadOptions failed');
      return failure;
    }
    this.logger.error({ ...about, err: error }, 'loadOptions failed');
    return new AppError(ErrorCode.INTERNAL, 'loadOptions failed', { cause: error });
  }
}

function optionsProblem(listed: unknown): string | undefined {
  if (!Array.isArray(listed)) return `expected an array, got ${listed === null ? 'null' : typeof listed}`;
  for (const [index, option] of listed.entries()) {
    if (typeof option !== 'object' || option === null) return `item ${index} is not an object`;
    const { value, label, description } = option as Record<string, unknown>;
    const scalar = typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!scalar) return `item ${index}: value must be a string, a finite number or a boolean`;
    if (typeof label !== 'string') return `item ${index}: label must be a string`;
    if (description !== undefined && typeof description !== 'string') return `item ${index}: description must be a string`;
  }
  return undefined;
}
