import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A child process with everything it wrote to stdout and stderr so far. */
export interface Spawned {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or signal) once the process has exited, or rejects after `timeoutMs`. */
  exited(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Signals the process and every process it started, at once (its process group: it was spawned
   * `detached`), as a crash of the machine or a container kill ends them all; a bare `child.kill`
   * reaches the first process only.
   */
  killAll(signal: NodeJS.Signals): void;
}

export function spawnCollecting(command: string, args: string[], options: SpawnOptions): Spawned {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => output,
    exited: (timeoutMs = 30_000) => {
      let timer: NodeJS.Timeout;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`process ${child.pid} still runs after ${timeoutMs} ms:\n${output}`)), timeoutMs);
      });
      return Promise.race([exit, timeout]).finally(() => clearTimeout(timer));
    },
    killAll: (signal) => {
      if (!options.detached || child.pid === undefined) {
        child.kill(signal);
        return;
      }
      try {
        process.kill(-child.pid, signal);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    },
  };
}

/** A port nothing listens on right now (the OS picks it), for a child process to take. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Whether a process with this id exists (a zombie still counts until its parent reaps it). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Polls `url` until it answers 200, failing early when the process exits. */
export async function waitForHttp(url: string, spawned: Spawned, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (spawned.child.exitCode !== null || spawned.child.signalCode !== null) {
      throw new Error(
        `process exited (${spawned.child.exitCode ?? spawned.child.signalCode}) before ${url} answered:\n${spawned.output()}`,
      );
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms:\n${spawned.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The JSON log lines a process wrote (pino), skipping anything else. */
export function logLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

const ROOT = join(__dirname, '..', '..');

/**
 * The built service (dist/) in a process group of its own (with the worker processes it starts) on
 * 127.0.0.1:`port`, ready once /health/ready answers: for tests that kill it (`killAll` ends every
 * process of the service, `child.kill` the supervising one only). `env` adds to or overrides the
 * defaults (warn-level logs).
 */
export async function bootService(port: number, env: Record<string, string>): Promise<Spawned> {
  const spawned = spawnCollecting(process.execPath, ['--no-node-snapshot', join(ROOT, 'dist', 'src', 'main.js')], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
  });
  await waitForHttp(`http://127.0.0.1:${port}/health/ready`, spawned, 120_000);
  return spawned;
}

/** A JSON call to a service under `base` with an API key: its status and parsed body (undefined when empty). */
export const jsonCaller =
  (base: string, key: string) =>
  async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(base + path, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

/** Stops a service still running: SIGTERM, and SIGKILL if it has not exited within a minute. */
export async function stopService(service: Spawned | undefined): Promise<void> {
  if (!service || service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGTERM');
  await service.exited(60_000).catch(() => service.child.kill('SIGKILL'));
}

export const tempDir = (label: string): string => mkdtempSync(join(tmpdir(), `wcs-${label}-`));
