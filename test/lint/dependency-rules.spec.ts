import { ESLint } from 'eslint';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The dependency rules of ARCHITECTURE.md are lint rules; these cases prove they bite. */
describe('dependency rules (eslint)', () => {
  const root = join(__dirname, '..', '..');

  // The configuration `npm run lint` uses (eslint.config.js), loaded once for every case (handed
  // over as an object: ESLint's own loader imports it dynamically, which jest's sandbox refuses).
  const eslint = new ESLint({ cwd: root, overrideConfigFile: true, overrideConfig: require(join(root, 'eslint.config.js')) });

  /** Lints `code` as if it lived at `filePath`; the messages of `rule`. */
  async function violations(code: string, filePath: string, rule = 'no-restricted-imports'): Promise<string[]> {
    const [result] = await eslint.lintText(code, { filePath: join(root, filePath) });
    return result.messages.filter((m) => m.ruleId === rule).map((m) => m.message);
  }

  it('lets a plugin import src/sdk only', async () => {
    expect(
      await violations("import { defineNode } from '../../src/sdk';\nexport default defineNode;\n", 'plugins/example/index.ts'),
    ).toEqual([]);
    expect(
      await violations("import { AppError } from '../../src/common/app-error';\nexport default AppError;\n", 'plugins/example/index.ts'),
    ).toHaveLength(1);
    expect(
      await violations("import { Injectable } from '@nestjs/common';\nexport default Injectable;\n", 'plugins/example/index.ts'),
    ).toHaveLength(1);
  });

  it('keeps database drivers inside adapters', async () => {
    const code = "import mongoose from 'mongoose';\nexport const m = mongoose;\n";
    expect(await violations(code, 'src/collections/collections.service.ts')).toHaveLength(1);
    expect(await violations(code, 'src/storage/mongo/mongo-user-store.adapter.ts')).toEqual([]);
    expect(await violations("import Bull from 'bull';\nexport const b = Bull;\n", 'src/workflows/runs.service.ts')).toHaveLength(1);
    expect(await violations("import ivm from 'isolated-vm';\nexport const i = ivm;\n", 'src/engine/executor.ts')).toHaveLength(1);
  });

  it('keeps @nestjs/bull to the Bull adapter: handlers are @OnJob methods', async () => {
    const code = "import { Process, Processor } from '@nestjs/bull';\nexport const d = [Process, Processor];\n";
    expect(await violations(code, 'src/runs/run-worker.service.ts')).toEqual([expect.stringContaining('@OnJob')]);
    expect(await violations(code, 'src/ingestion/ingestion.service.ts')).toHaveLength(1);
    expect(await violations(code, 'src/jobs/on-job.decorator.ts')).toHaveLength(1);
    expect(
      await violations(
        "import { BULL_MODULE_QUEUE } from '@nestjs/bull/dist/bull.constants';\nexport const k = BULL_MODULE_QUEUE;\n",
        'src/jobs/job-handlers.ts',
      ),
    ).toHaveLength(1);
    expect(await violations(code, 'src/jobs/bull/bull-jobs.module.ts')).toEqual([]);
  });

  it('keeps src/sdk free of our other code and of Nest', async () => {
    expect(
      await violations("import { AppError } from '../common/app-error';\nexport const e = AppError;\n", 'src/sdk/index.ts'),
    ).toHaveLength(1);
    expect(await violations("import { Module } from '@nestjs/common';\nexport const m = Module;\n", 'src/sdk/index.ts')).toHaveLength(1);
  });

  it('keeps MCP tools off the stores', async () => {
    const code = "import { FileStore } from '../../storage/file-store.port';\nexport const s = FileStore;\n";
    expect(await violations(code, 'src/mcp/tools/list-collection-files.tool.ts')).toHaveLength(1);
    expect(
      await violations("import { FileStore } from '../storage/file-store.port';\nexport const s = FileStore;\n", 'src/mcp/mcp.module.ts'),
    ).toHaveLength(1);
    expect(
      await violations(
        "import { FilesService } from '../collections/files.service';\nexport const s = FilesService;\n",
        'src/mcp/mcp.module.ts',
      ),
    ).toEqual([]);
  });

  it('keeps storage and common beneath the features', async () => {
    const engine = "import { NodeRegistry } from '../../engine/node-registry';\nexport const r = NodeRegistry;\n";
    expect(await violations(engine, 'src/storage/run-store.port.ts')).toHaveLength(1);
    expect(await violations(engine, 'src/storage/embedded/sqlite-run-store.adapter.ts')).toHaveLength(1);
    expect(
      await violations("import { JobQueue } from '../jobs/job-queue.port';\nexport const q = JobQueue;\n", 'src/common/pagination.ts'),
    ).toHaveLength(1);
    expect(await violations("import { AppError } from './app-error';\nexport const e = AppError;\n", 'src/common/pagination.ts')).toEqual(
      [],
    );
    // Adapters keep their drivers.
    expect(
      await violations("import Database from 'better-sqlite3';\nexport const d = Database;\n", 'src/storage/embedded/sqlite-database.ts'),
    ).toEqual([]);
    expect(
      await violations("import Database from 'better-sqlite3';\nexport const d = Database;\n", 'src/storage/storage-connections.ts'),
    ).toHaveLength(1);
  });

  it("keeps the port areas beneath the features: a feature's domain records at most", async () => {
    // Health and metrics are features: a port exposes ping() and depth(), and they read them.
    expect(
      await violations(
        "import { ReadinessRegistry } from '../health/readiness.registry';\nexport const r = ReadinessRegistry;\n",
        'src/jobs/jobs.module.ts',
      ),
    ).toHaveLength(1);
    expect(
      await violations("import { Metrics } from '../metrics/metrics.service';\nexport const m = Metrics;\n", 'src/jobs/jobs.module.ts'),
    ).toHaveLength(1);
    expect(
      await violations(
        "import { ReadinessRegistry } from '../health/readiness.registry';\nexport const r = ReadinessRegistry;\n",
        'src/search/search.module.ts',
      ),
    ).toHaveLength(1);
    expect(
      await violations(
        "import { AccessPolicy } from '../auth/access-policy.service';\nexport const a = AccessPolicy;\n",
        'src/search/vector-index.port.ts',
      ),
    ).toHaveLength(1);
    expect(
      await violations(
        "import { Metrics } from '../../metrics/metrics.service';\nexport const m = Metrics;\n",
        'src/embeddings/local/local-embedder.adapter.ts',
      ),
    ).toHaveLength(1);
    expect(
      await violations(
        "import { RunsService } from '../workflows/runs.service';\nexport const r = RunsService;\n",
        'src/storage/run-store.port.ts',
      ),
    ).toHaveLength(1);
    expect(
      await violations(
        "import { RunWorker } from '../../runs/run-worker.service';\nexport const r = RunWorker;\n",
        'src/rate-limit/redis/redis-rate-limiter.adapter.ts',
      ),
    ).toHaveLength(1);
    // A store speaks in the domain's records.
    expect(
      await violations("import type { Run } from '../runs/run.model';\nexport type R = Run;\n", 'src/storage/run-store.port.ts'),
    ).toEqual([]);
    expect(
      await violations(
        "import type { Workflow } from '../../workflows/workflow.model';\nexport type W = Workflow;\n",
        'src/storage/mongo/mongo-workflow-store.adapter.ts',
      ),
    ).toEqual([]);
    // Features use the ports.
    expect(
      await violations("import { JobQueue } from '../jobs/job-queue.port';\nexport const q = JobQueue;\n", 'src/health/health.module.ts'),
    ).toEqual([]);
  });

  it('fails on an import cycle', async () => {
    const dir = mkdtempSync(join(root, 'src', 'lint-cycle-'));
    try {
      writeFileSync(join(dir, 'a.ts'), "import { b } from './b';\nexport const a = (): number => b() + 1;\n");
      writeFileSync(join(dir, 'b.ts'), "import { a } from './a';\nexport const b = (): number => a() - 1;\n");
      writeFileSync(join(dir, 'c.ts'), 'export const c = 1;\n');
      const file = relative(root, join(dir, 'a.ts'));
      expect(
        await violations("import { b } from './b';\nexport const a = (): number => b() + 1;\n", file, 'import-x/no-cycle'),
      ).toHaveLength(1);
      expect(await violations("import { c } from './c';\nexport const a = (): number => c + 1;\n", file, 'import-x/no-cycle')).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
