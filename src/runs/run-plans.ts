import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { AppConfig } from '../config/app-config';
import { LruCache } from '../common/lru-cache';
import { NodeRegistry } from '../engine/node-registry';
import { Redactor } from '../engine/redactor';
import { CompileOptions, compileWorkflow, CompiledWorkflow } from '../engine/workflow-compiler';
import { WorkflowDefinition } from '../domain/workflow-definition.model';
import type { VariableValue } from '../sdk';
import { Run } from '../domain/run.model';
import { WorkflowStore } from '../domain/workflow-store.port';
import { SecretCipher } from '../common/secret-cipher';
import type { WorkflowVariable } from '../domain/workflow-definition.model';

/** What a worker needs to execute a run, prepared once per published version. */
export interface RunPlan {
  plan: CompiledWorkflow;
  variables: Readonly<Record<string, VariableValue>>;
  redactor: Redactor;
}

export const CACHED_VERSIONS = 256;

/**
 * Compiled plans of published versions, which never change, so production runs skip parsing,
 * graph checks, parameter validation and decryption after the first run of a version. A test
 * run executes the draft frozen into it and is prepared each time.
 */
@Injectable()
export class RunPlans {
  private readonly versions = new LruCache<string, RunPlan>(CACHED_VERSIONS);
  /** Versions whose plan is being read and compiled now: as many at most as runs being claimed. */
  private readonly reading = new Map<string, Promise<RunPlan>>();
  private readonly compileOptions: CompileOptions;

  constructor(
    private readonly workflows: WorkflowStore,
    private readonly registry: NodeRegistry,
    private readonly cipher: SecretCipher,
    config: AppConfig,
  ) {
    this.compileOptions = { aiDecide: Boolean(config.LLM_URL) };
  }

  async forRun(run: Run): Promise<RunPlan> {
    if (run.definition) return this.prepare(run.definition, run.workflowId);
    if (!run.versionId) throw AppError.notFound('definition of run', run.id);
    const cached = this.versions.get(run.versionId);
    if (cached) return cached;
    // Runs of a version claimed together before its first plan is ready share one read and one compile.
    let reading = this.reading.get(run.versionId);
    if (!reading) {
      reading = this.read(run);
      this.reading.set(run.versionId, reading);
      const versionId = run.versionId;
      const settled = () => this.reading.delete(versionId);
      reading.then(settled, settled);
    }
    return reading;
  }

  private async read(run: Run): Promise<RunPlan> {
    const version = await this.workflows.getVersionById(run.versionId!);
    if (!version) throw AppError.notFound(`version ${run.version} of workflow`, run.workflowId);
    const prepared = this.prepare(version.definition, run.workflowId);
    this.versions.set(run.versionId!, prepared);
    return prepared;
  }

  /** How many published versions' plans are kept now (at most CACHED_VERSIONS). */
  get cached(): number {
    return this.versions.size;
  }

  private prepare(definition: WorkflowDefinition, workflowId: string): RunPlan {
    const plan = compileWorkflow(definition, this.registry, this.compileOptions);
    const { values, secrets } = revealVariables(definition.variables, workflowId, this.cipher);
    return { plan, variables: values, redactor: new Redactor(secrets) };
  }
}

/**
 * Values as nodes and expressions read them, and the plaintext secrets to mask in records and logs:
 * the reverse of sealVariables (workflows/workflow-variables.ts), which encrypted each secret under its workflow's id.
 */
function revealVariables(
  variables: readonly WorkflowVariable[],
  workflowId: string,
  cipher: SecretCipher,
): { values: Record<string, VariableValue>; secrets: string[] } {
  const values: Record<string, VariableValue> = {};
  const secrets: string[] = [];
  for (const variable of variables) {
    if (variable.type === 'secret') {
      const plaintext = cipher.decrypt(String(variable.value), workflowId);
      values[variable.name] = plaintext;
      secrets.push(plaintext);
    } else {
      values[variable.name] = variable.value;
    }
  }
  return { values: Object.freeze(values), secrets };
}
