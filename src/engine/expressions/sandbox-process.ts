/**
 * A sandbox process: the program SandboxProcessPool starts to run code in isolates outside the
 * service, so that whatever kills an isolate beyond isolated-vm's reach (V8's fatal out-of-memory
 * error ends the whole process) kills this process and not the service.
 *
 *   node --no-node-snapshot sandbox-process.js <memoryLimitMb> <cacheSize>
 *
 * It reads requests from file descriptor 3 and answers on it, one request at a time (see
 * sandbox-protocol.ts), and exits when the service closes the pipe.
 */
import { Socket } from 'node:net';
import { LruCache } from '../../common/lru-cache';
import { IsolateSandbox } from './isolate-sandbox.adapter';
import { encodeFrame, FrameReader, Program, READY, RunReply, RunRequest, SandboxError } from './sandbox-protocol';

const [memoryLimitMb, cacheSize] = process.argv.slice(2).map(Number);
const sandbox = new IsolateSandbox({ memoryLimitMb, cacheSize });
/** The programs the service sent, by its id; it keeps the same LRU order, so it knows which need sending again. */
const programs = new LruCache<number, Program>(cacheSize);
const pipe = new Socket({ fd: 3, readable: true, writable: true });

let queue = Promise.resolve();
const reader = new FrameReader((request: RunRequest, argsJson: string) => {
  queue = queue.then(() => answer(request, argsJson));
});

async function answer(request: RunRequest, argsJson: string): Promise<void> {
  let reply: RunReply;
  let output = '';
  try {
    output = await sandbox.run(programOf(request), argsJson, request);
    reply = { id: request.id, ok: true };
  } catch (error) {
    const failure = error instanceof SandboxError ? error : new SandboxError('SANDBOX_CRASHED', `sandbox process failed: ${String(error)}`);
    reply = { id: request.id, ok: false, failure: failure.failure, facts: failure.facts };
    output = failure.reason;
  }
  if (sandbox.stuck) reply.retiring = true;
  pipe.write(encodeFrame(reply, output));
  // Its thread still runs a disposed isolate's builtin, whose CPU time would count against the
  // next call: the service starts a fresh process instead.
  if (sandbox.stuck) pipe.end(() => process.exit(0));
}

function programOf(request: RunRequest): Program {
  if (request.source !== undefined) {
    const [paramsJson, codesJson, literalsJson] = request.source;
    const program = { paramsJson, codesJson, literalsJson };
    programs.set(request.program, program);
    return program;
  }
  const known = programs.get(request.program);
  if (known === undefined) throw new SandboxError('SANDBOX_CRASHED', `sandbox process does not know program ${request.program}`);
  return known;
}

pipe.on('data', (chunk: Buffer) => reader.push(chunk));
// The service closed the pipe or died: nothing is left to answer to.
pipe.on('close', () => process.exit(0));
pipe.on('error', () => process.exit(0));
sandbox.prepare();
pipe.write(encodeFrame(READY));
