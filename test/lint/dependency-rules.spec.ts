import { ESLint } from 'eslint';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The dependency rules of docs/architecture.md are lint rules; these cases prove they bite. */
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

  it('lets a plugin import the SDK by its package name only', async () => {
    const lint = (code: string) => violations(code, 'plugins/example/index.ts');
    expect(await lint("import { defineNode } from 'workflow-collection-service/sdk';\nexport default defineNode;\n")).toEqual([]);
    expect(await lint("import { inputContext } from 'workflow-collection-service/sdk/testing';\nexport default inputContext;\n")).toEqual(
      [],
    );
    // Not by a path into the repository, whatever it reaches.
    expect(await lint("import { defineNode } from '../../src/sdk';\nexport default defineNode;\n")).toEqual([
      expect.stringContaining('workflow-collection-service/sdk'),
    ]);
    expect(await lint("import { inputContext } from '../../src/sdk/testing';\nexport default inputContext;\n")).toHaveLength(1);
    expect(await lint("import { defineNode } from '../../dist/src/sdk';\nexport default defineNode;\n")).toHaveLength(1);
    expect(await lint("import { AppError } from '../../src/common/app-error';\nexport default AppError;\n")).toHaveLength(1);
    // Nor the rest of the package, Nest or a driver.
    expect(await lint("import { x } from 'workflow-collection-service/dist/src/common/app-error';\nexport default x;\n")).not.toEqual([]);
    expect(await lint("import { x } from 'workflow-collection-service/sdk/node-context';\nexport default x;\n")).toHaveLength(1);
    expect(await lint("import { Injectable } from '@nestjs/common';\nexport default Injectable;\n")).toHaveLength(1);
    expect(await lint("import mongoose from 'mongoose';\nexport default mongoose;\n")).toHaveLength(1);
  });

  it('keeps database drivers inside adapters', async () => {
    const code = "import mongoose from 'mongoose';\nexport const m = mongoose;\n";
    expect(await violations(code, 'src/collections/collections.service.ts')).toHaveLength(1);
    expect(await violations(code, 'src/storage/mongo/mongo-user-store.adapter.ts')).toEqual([]);
    expect(await violations("import Bull from 'bull';\nexport const b = Bull;\n", 'src/runs/runs.service.ts')).toHaveLength(1);
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
    const code = "import { FileStore } from '../../domain/file-store.port';\nexport const s = FileStore;\n";
    expect(await violations(code, 'src/mcp/tools/list-collection-files.tool.ts')).toHaveLength(1);
    expect(
      await violations("import { FileStore } from '../domain/file-store.port';\nexport const s = FileStore;\n", 'src/mcp/mcp.module.ts'),
    ).toHaveLength(1);
    expect(
      await violations(
        "import { StorageModule } from '../storage/storage.module';\nexport const s = StorageModule;\n",
        'src/mcp/mcp.module.ts',
      ),
    ).toHaveLength(1);
    expect(
      await violations(
        "import { FilesService } from '../collections/files.service';\nexport const s = FilesService;\n",
        'src/mcp/mcp.module.ts',
      ),
    ).toEqual([]);
    // A record is no store: tools speak in the domain's records.
    expect(
      await violations(
        "import type { StoredFile } from '../../domain/file.model';\nexport type F = StoredFile;\n",
        'src/mcp/tools/records.ts',
      ),
    ).toEqual([]);
  });

  it('keeps the domain on the floor: it imports no feature, no adapter, no door, nothing of Nest', async () => {
    const lint = (code: string) => violations(code, 'src/domain/run-store.port.ts');
    // Features.
    expect(await lint("import { RunsService } from '../runs/runs.service';\nexport const r = RunsService;\n")).toHaveLength(1);
    expect(await lint("import { NodeRegistry } from '../engine/node-registry';\nexport const r = NodeRegistry;\n")).toHaveLength(1);
    expect(await lint("import type { Principal } from '../auth/principal';\nexport type P = Principal;\n")).toHaveLength(1);
    // Adapters and the modules that pick them.
    expect(
      await lint("import { StorageConnections } from '../storage/storage-connections';\nexport const c = StorageConnections;\n"),
    ).toHaveLength(1);
    expect(
      await lint("import { SqliteRunStore } from '../storage/embedded/sqlite-run-store.adapter';\nexport const s = SqliteRunStore;\n"),
    ).toHaveLength(1);
    expect(await lint("import { JobsModule } from '../jobs/jobs.module';\nexport const j = JobsModule;\n")).toHaveLength(1);
    // Doors, the rest of common/ and config/, Nest and the drivers.
    expect(await lint("import { McpModule } from '../mcp/mcp.module';\nexport const m = McpModule;\n")).toHaveLength(1);
    expect(await lint("import { SafeFetch } from '../common/safe-fetch';\nexport const f = SafeFetch;\n")).toHaveLength(1);
    expect(await lint("import { AppConfig } from '../config/app-config';\nexport const c = AppConfig;\n")).toHaveLength(1);
    expect(await lint("import { Injectable } from '@nestjs/common';\nexport const i = Injectable;\n")).toHaveLength(1);
    expect(await lint("import mongoose from 'mongoose';\nexport const m = mongoose;\n")).toHaveLength(1);
    // What it may use: its own records, the SDK, and common's error type, ids and page shape.
    expect(await lint("import type { Run } from './run.model';\nexport type R = Run;\n")).toEqual([]);
    expect(await lint("import type { NodeSubStep } from '../sdk';\nexport type S = NodeSubStep;\n")).toEqual([]);
    expect(await lint("import { AppError } from '../common/app-error';\nexport const e = AppError;\n")).toEqual([]);
    expect(await lint("import { newId } from '../common/ids';\nexport const n = newId;\n")).toEqual([]);
    expect(await lint("import type { Page } from '../common/page';\nexport type P = Page<number>;\n")).toEqual([]);
  });

  it('keeps common and config beneath everything', async () => {
    expect(
      await violations("import { JobQueue } from '../domain/job-queue.port';\nexport const q = JobQueue;\n", 'src/common/pagination.ts'),
    ).toHaveLength(1);
    expect(
      await violations(
        "import { StorageModule } from '../storage/storage.module';\nexport const s = StorageModule;\n",
        'src/config/config.module.ts',
      ),
    ).toHaveLength(1);
    expect(await violations("import { AppError } from './app-error';\nexport const e = AppError;\n", 'src/common/pagination.ts')).toEqual(
      [],
    );
  });

  it('keeps the adapter areas beneath the features: a port area importing a feature fails', async () => {
    // A store's adapter speaks in the domain's records, never in a feature's.
    expect(
      await violations(
        "import type { Run } from '../../domain/run.model';\nexport type R = Run;\n",
        'src/storage/embedded/sqlite-run-store.adapter.ts',
      ),
    ).toEqual([]);
    expect(
      await violations(
        "import type { Workflow } from '../../workflows/workflow.model';\nexport type W = Workflow;\n",
        'src/storage/mongo/mongo-workflow-store.adapter.ts',
      ),
    ).toHaveLength(1);
    const engine = "import { NodeRegistry } from '../../engine/node-registry';\nexport const r = NodeRegistry;\n";
    expect(await violations(engine, 'src/storage/embedded/sqlite-run-store.adapter.ts')).toHaveLength(1);
    expect(await violations(engine, 'src/model-and-tool-servers/openai-compatible/openai-language-models.adapter.ts')).toHaveLength(1);
    // Health and metrics are features: an adapter exposes ping() and depth(), and they read them.
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
        'src/search-index/search-index.module.ts',
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
        "import { RunWorker } from '../../runs/run-worker.service';\nexport const r = RunWorker;\n",
        'src/rate-limit/redis/redis-rate-limiter.adapter.ts',
      ),
    ).toHaveLength(1);
    // An adapter may build on another's connections, and on the domain's ports.
    expect(
      await violations(
        "import { openSqliteDatabase } from '../../storage/embedded/sqlite-database';\nexport const o = openSqliteDatabase;\n",
        'src/jobs/embedded/sqlite-job-store.adapter.ts',
      ),
    ).toEqual([]);
    expect(
      await violations(
        "import { JobStore } from '../../domain/job-store.port';\nexport const s = JobStore;\n",
        'src/jobs/embedded/sqlite-job-store.adapter.ts',
      ),
    ).toEqual([]);
    // Adapters keep their drivers; the rest of an adapter area does not.
    expect(
      await violations("import Database from 'better-sqlite3';\nexport const d = Database;\n", 'src/storage/embedded/sqlite-database.ts'),
    ).toEqual([]);
    expect(
      await violations("import Database from 'better-sqlite3';\nexport const d = Database;\n", 'src/storage/storage-connections.ts'),
    ).toHaveLength(1);
  });

  it('keeps the features beneath the doors', async () => {
    expect(
      await violations(
        "import { McpModule } from '../mcp/mcp.module';\nexport const m = McpModule;\n",
        'src/workflows/workflows.module.ts',
      ),
    ).toHaveLength(1);
    expect(
      await violations("import { AppModule } from '../app.module';\nexport const m = AppModule;\n", 'src/runs/runs.module.ts'),
    ).toHaveLength(1);
    expect(
      await violations(
        "import { setupWebConsole } from '../web-console/web-console';\nexport const s = setupWebConsole;\n",
        'src/runs/approval-pages.ts',
      ),
    ).toHaveLength(1);
    // Features use the domain's ports, the adapters' modules and each other.
    expect(
      await violations("import { JobQueue } from '../domain/job-queue.port';\nexport const q = JobQueue;\n", 'src/health/health.module.ts'),
    ).toEqual([]);
    expect(
      await violations("import { JobsModule } from '../jobs/jobs.module';\nexport const j = JobsModule;\n", 'src/health/health.module.ts'),
    ).toEqual([]);
    expect(
      await violations(
        "import { RunsService } from '../runs/runs.service';\nexport const r = RunsService;\n",
        'src/workflows/workflow-tools.service.ts',
      ),
    ).toEqual([]);
  });

  it("points every message to the repository's own docs/architecture.md", async () => {
    const messages = [
      ...(await violations(
        "import { RunsService } from '../runs/runs.service';\nexport const r = RunsService;\n",
        'src/domain/run.model.ts',
      )),
      ...(await violations(
        "import { RunsService } from '../../runs/runs.service';\nexport const r = RunsService;\n",
        'src/storage/mongo/x.ts',
      )),
      ...(await violations("import mongoose from 'mongoose';\nexport const m = mongoose;\n", 'src/runs/runs.service.ts')),
      ...(await violations(
        "import { AppError } from '../../src/common/app-error';\nexport default AppError;\n",
        'plugins/example/index.ts',
      )),
    ];
    expect(messages).toHaveLength(4);
    for (const message of messages) {
      expect(message).toContain('docs/architecture.md');
      expect(message).not.toMatch(/ARCHITECTURE\.md|shared\s+design\s+notes/);
    }
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
