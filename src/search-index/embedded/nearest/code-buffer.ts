import { freeNow } from './free-now';

/**
 * Buffers of a cell's codes from this size on are mappings of their own (resizable ArrayBuffers:
 * V8 reserves their largest size as address space and commits what they hold), not blocks of the
 * search thread's malloc arena. A thread whose rows came through ingestion freed and allocated
 * cell buffers of every size as cells grew and were computed again, between the small blocks of
 * each read (a row's float vector, its messages), and the arena kept the holes: one thread of
 * 1,500,000 rows held 1,210 MiB for 732 MiB of codes. A mapping grows in place (no copy, no second
 * buffer meanwhile), its room not yet written is not resident, and freeing or shrinking it gives its
 * pages back to the system at once. Below this size (a cell of 256 rows of 512-d codes) the buffers
 * stay in the arena: each mapping costs two of the process's limited memory areas
 * (vm.max_map_count, 65,530 by default), and small blocks are where an arena does well.
 */
export const MAPPED_FROM = 128 * 1024;
/** A mapping reserves this many times the bytes it is allocated for (address space, not memory), to grow into. */
const RESERVE = 4;

/** The ES2024 resizable ArrayBuffer (Node 20), which this project's TypeScript lib (ES2023) does not describe. */
interface Resizable extends ArrayBuffer {
  readonly resizable: boolean;
  readonly maxByteLength: number;
  resize(bytes: number): void;
}
type ResizableArrayBufferConstructor = new (bytes: number, options: { maxByteLength: number }) => Resizable;

/** A zeroed buffer of `bytes` bytes of codes: a mapping of its own from MAPPED_FROM on. */
export function codeBuffer(bytes: number): Int8Array {
  if (bytes < MAPPED_FROM) return new Int8Array(bytes);
  try {
    const buffer = new (ArrayBuffer as unknown as ResizableArrayBufferConstructor)(bytes, { maxByteLength: RESERVE * bytes });
    // A view of fixed length: one that tracks the buffer's length is slower to index.
    return new Int8Array(buffer, 0, bytes);
  } catch {
    // No address space or no memory area left for a mapping: a block of the arena serves as well.
    return new Int8Array(bytes);
  }
}

/**
 * `codes` (its first `kept` bytes) in a buffer of `bytes` bytes: the same mapping resized when it
 * has the room (growing commits address space; shrinking gives the pages back), else a new buffer
 * with the bytes copied and the old one freed now. `codes` is a whole buffer's view; its buffer is
 * the new one's or gone after the call.
 */
export function resizedCodes(codes: Int8Array, bytes: number, kept: number): Int8Array {
  const buffer = codes.buffer as Resizable;
  if (buffer.resizable && bytes >= MAPPED_FROM && bytes <= buffer.maxByteLength) {
    buffer.resize(bytes);
    return new Int8Array(buffer, 0, bytes);
  }
  const next = codeBuffer(bytes);
  next.set(codes.subarray(0, Math.min(kept, bytes)));
  freeNow(codes);
  return next;
}
