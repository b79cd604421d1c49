import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

/** The dependency rules of ARCHITECTURE.md are lint rules; these cases prove they bite. */
describe('dependency rules (eslint)', () => {
  const root = join(__dirname, '..', '..');

  /** Lints `code` as if it lived at `filePath`, through the eslint CLI that `npm run lint` uses. */
  async function violations(code: string, filePath: string): Promise<string[]> {
    const eslint = spawn(
      process.execPath,
      [join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'), '--format', 'json', '--stdin', '--stdin-filename', filePath],
      { cwd: root },
    );
    let stdout = '';
    eslint.stdout.on('data', (chunk) => (stdout += chunk));
    eslint.stdin.end(code);
    await once(eslint, 'close');
    const [result] = JSON.parse(stdout) as { messages: { ruleId: string; message: string }[] }[];
    return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
  }

  it('lets a plugin import src/sdk only', async () => {
    expect(await violations("import { defineNode } from '../../src/sdk';\nexport default defineNode;\n", 'plugins/example/index.ts')).toEqual([]);
    expect(await violations("import { AppError } from '../../src/common/app-error';\nexport default AppError;\n", 'plugins/example/index.ts')).toHaveLength(1);
    expect(await violations("import { Injectable } from '@nestjs/common';\nexport default Injectable;\n", 'plugins/example/index.ts')).toHaveLength(1);
  });

  it('keeps database drivers inside adapters', async () => {
    const code = "import mongoose from 'mongoose';\nexport const m = mongoose;\n";
    expect(await violations(code, 'src/collections/collections.service.ts')).toHaveLength(1);
    expect(await violations(code, 'src/storage/mongo/mongo-user-store.adapter.ts')).toEqual([]);
    expect(await violations("import Bull from 'bull';\nexport const b = Bull;\n", 'src/workflows/runs.service.ts')).toHaveLength(1);
    expect(await violations("import ivm from 'isolated-vm';\nexport const i = ivm;\n", 'src/engine/executor.ts')).toHaveLength(1);
  });

  it('keeps @nestjs/bull to the Bull adapter and the job handler decorators', async () => {
    const code = "import { Process, Processor } from '@nestjs/bull';\nexport const d = [Process, Processor];\n";
    expect(await violations(code, 'src/workflows/run.processor.ts')).toEqual([expect.stringContaining('src/jobs/job-handler.decorators.ts')]);
    expect(await violations(code, 'src/ingestion/ingestion.processor.ts')).toHaveLength(1);
    expect(await violations("import { BULL_MODULE_QUEUE } from '@nestjs/bull/dist/bull.constants';\nexport const k = BULL_MODULE_QUEUE;\n", 'src/jobs/job-handlers.ts')).toHaveLength(1);
    expect(await violations(code, 'src/jobs/job-handler.decorators.ts')).toEqual([]);
    expect(await violations(code, 'src/jobs/bull/bull-jobs.module.ts')).toEqual([]);
    expect(await violations("import Bull from 'bull';\nexport const b = Bull;\n", 'src/jobs/job-handler.decorators.ts')).toHaveLength(1);
  });

  it('keeps src/sdk free of our other code and of Nest', async () => {
    expect(await violations("import { AppError } from '../common/app-error';\nexport const e = AppError;\n", 'src/sdk/index.ts')).toHaveLength(1);
    expect(await violations("import { Module } from '@nestjs/common';\nexport const m = Module;\n", 'src/sdk/index.ts')).toHaveLength(1);
  });

  it('keeps MCP tools off the stores', async () => {
    const code = "import { FileStore } from '../../storage/ports/file-store.port';\nexport const s = FileStore;\n";
    expect(await violations(code, 'src/mcp/tools/list-collection-files.tool.ts')).toHaveLength(1);
    expect(await violations("import { FileStore } from '../storage/ports/file-store.port';\nexport const s = FileStore;\n", 'src/mcp/mcp.module.ts')).toHaveLength(1);
    expect(await violations("import { FilesService } from '../collections/files.service';\nexport const s = FilesService;\n", 'src/mcp/mcp.module.ts')).toEqual([]);
  });

  it('keeps storage and common beneath the features', async () => {
    const engine = "import { NodeRegistry } from '../../engine/node-registry';\nexport const r = NodeRegistry;\n";
    expect(await violations(engine, 'src/storage/ports/run-store.port.ts')).toHaveLength(1);
    expect(await violations(engine, 'src/storage/embedded/sqlite-run-store.adapter.ts')).toHaveLength(1);
    expect(await violations("import { JobQueue } from '../jobs/job-queue.port';\nexport const q = JobQueue;\n", 'src/common/pagination.ts')).toHaveLength(1);
    expect(await violations("import { AppError } from './app-error';\nexport const e = AppError;\n", 'src/common/pagination.ts')).toEqual([]);
    // Adapters keep their drivers.
    expect(await violations("import Database from 'better-sqlite3';\nexport const d = Database;\n", 'src/storage/embedded/sqlite-database.ts')).toEqual([]);
    expect(await violations("import Database from 'better-sqlite3';\nexport const d = Database;\n", 'src/storage/storage-connections.ts')).toHaveLength(1);
  });
});
