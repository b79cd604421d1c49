/**
 * What the service and its sandbox processes say to each other, and the failures they share.
 * Imports nothing of isolated-vm: the service's side of the pipe never touches an isolate.
 */

/**
 * What an isolate compiles: one expression, a function body, or the insertions of a template and
 * the literal text around them. The engine keeps one instance per source and parameter list, so
 * caches can be keyed by identity.
 */
export interface Program {
  /** JSON array of the parameter names, in the order of the arguments array. */
  readonly paramsJson: string;
  /** JSON array of the code of each expression. */
  readonly codesJson: string;
  /** JSON array of a template's literal text; '' for an expression, BODY for a function body. */
  readonly literalsJson: string;
}

/**
 * Why an evaluation failed, as the error codes of the service name them:
 * - CODE_ERROR: the code's own fault (syntax, an exception, a result that is not JSON);
 * - TIMEOUT: it used its CPU time;
 * - MEMORY_LIMIT: it used its memory (the isolate's limit, or V8 gave up and the process died);
 * - RESULT_TOO_LARGE: its result (a template's text, an expression's or a body's JSON) is longer
 *   than resultLimitChars, found in the isolate before the text is put together or copied out;
 * - SANDBOX_UNRESPONSIVE: no answer within the wall-clock backstop, CPU limit or not (a stalled
 *   machine or a builtin that ignores termination); its process was killed;
 * - SANDBOX_CRASHED: its process died for another reason.
 * `aborted`: the caller's signal fired. `closed`: the engine was closed.
 */
export type SandboxFailure =
  'CODE_ERROR' | 'TIMEOUT' | 'MEMORY_LIMIT' | 'RESULT_TOO_LARGE' | 'SANDBOX_UNRESPONSIVE' | 'SANDBOX_CRASHED' | 'aborted' | 'closed';

/**
 * Longest result, in characters, an isolate of `memoryLimitMb` hands back: a quarter of its memory
 * (8 M characters for 32 MB). A string can be far longer than its isolate's memory (a rope built
 * by `repeat`, flattened only when copied out), so the isolate checks its result's length itself.
 */
export function resultLimitChars(memoryLimitMb: number): number {
  return (memoryLimitMb * 1024 * 1024) / 4;
}

/** Where in a function body (the Code node) an exception was thrown or a syntax error found. */
export interface CodePosition {
  line: number | null;
  column: number | null;
}

export class SandboxError extends Error {
  override readonly name = 'SandboxError';

  constructor(
    readonly failure: SandboxFailure,
    readonly reason: string,
    /** CODE_ERROR of a function body: where, and for a result that is not JSON the path. */
    readonly facts: Partial<CodePosition> & { path?: string | null } = {},
  ) {
    super(reason);
  }
}

/** A request to a sandbox process; `source` comes with a program the process may not have yet. */
export interface RunRequest {
  id: number;
  program: number;
  source?: [paramsJson: string, codesJson: string, literalsJson: string];
  cpuLimitMs: number;
  wallLimitMs: number;
}

/**
 * A sandbox process's answer: the output, or why there is none. `retiring`: the process ends
 * after this answer (an isolate it could not stop in time), so nothing more may be sent to it.
 */
export interface RunReply {
  id: number;
  ok: boolean;
  failure?: SandboxFailure;
  facts?: SandboxError['facts'];
  retiring?: boolean;
}

/** The first message of a sandbox process, once its isolate is ready. */
export const READY = { ready: true } as const;

const HEADER_BYTES = 8;

/**
 * One message on the pipe: the byte lengths of a JSON header and a payload, then both. The
 * payload (arguments or output, often JSON already) goes as it is, not escaped into the header.
 */
export function encodeFrame(header: object, payload = ''): Buffer {
  const head = Buffer.from(JSON.stringify(header));
  const bodyBytes = Buffer.byteLength(payload);
  const frame = Buffer.allocUnsafe(HEADER_BYTES + head.length + bodyBytes);
  frame.writeUInt32LE(head.length, 0);
  frame.writeUInt32LE(bodyBytes, 4);
  head.copy(frame, HEADER_BYTES);
  frame.write(payload, HEADER_BYTES + head.length);
  return frame;
}

/** A frame declared longer than its reader takes: the stream cannot be trusted any further. */
export class FrameTooLarge extends Error {
  override readonly name = 'FrameTooLarge';
}

/**
 * Cuts a byte stream into frames; joins the chunks of a frame once it has all arrived. A frame
 * that declares more than `maxFrameBytes` throws FrameTooLarge from `push` before any of it is
 * gathered.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private size = 0;
  private needed = HEADER_BYTES;

  constructor(
    private readonly onFrame: (header: any, payload: string) => void,
    private readonly maxFrameBytes = Infinity,
  ) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size >= this.needed) {
      const buffer = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
      this.chunks = [buffer];
      const total = HEADER_BYTES + buffer.readUInt32LE(0) + buffer.readUInt32LE(4);
      if (total > this.maxFrameBytes) {
        this.chunks = [];
        this.size = 0;
        throw new FrameTooLarge(`a message of ${total} bytes, more than the ${this.maxFrameBytes} expected`);
      }
      if (buffer.length < total) {
        this.needed = total;
        return;
      }
      const headEnd = HEADER_BYTES + buffer.readUInt32LE(0);
      const header = JSON.parse(buffer.toString('utf8', HEADER_BYTES, headEnd));
      const payload = buffer.toString('utf8', headEnd, total);
      const rest = buffer.subarray(total);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.size = rest.length;
      this.needed = HEADER_BYTES;
      this.onFrame(header, payload);
    }
  }
}
