import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

/**
 * The cursors of the list methods (tools/list, resources/list, prompts/list): an offset into the
 * list, opaque to the client (MCP pagination), and refused with InvalidParams unless it is one this
 * server made for that same list.
 */

export const encodeCursor = (list: string, ...position: number[]): string =>
  Buffer.from(JSON.stringify([list, ...position])).toString('base64url');

/**
 * The position a cursor names (`size` whole numbers, offsets); zeros without one.
 * @throws ProtocolError InvalidParams for any other cursor
 */
export function decodeCursor(list: string, cursor: unknown, size = 1): number[] {
  if (cursor === undefined) return new Array<number>(size).fill(0);
  if (typeof cursor === 'string' && cursor.length <= 200) {
    try {
      const [name, ...position] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
      if (name === list && position.length === size && position.every((n) => Number.isSafeInteger(n) && (n as number) >= 0))
        return position as number[];
    } catch {
      // answered below
    }
  }
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Invalid cursor for ${list}: pass the nextCursor of the previous page unchanged`,
  );
}

/** One page of `items` from `offset`, with the cursor of the next page when there is one. */
export function pageOf<T>(list: string, items: readonly T[], offset: number, size: number): { page: T[]; nextCursor?: string } {
  const page = items.slice(offset, offset + size);
  const next = offset + page.length;
  return next < items.length ? { page, nextCursor: encodeCursor(list, next) } : { page };
}
