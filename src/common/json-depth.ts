/**
 * How deep a JSON body may nest. Far beyond what real payloads use (webhook bodies, workflow
 * definitions), far below where the recursive code that reads a body (validation, copies into
 * sandboxes, serialisation) would run out of stack: a body that deep was a 500, not a 400.
 */
export const MAX_JSON_DEPTH = 128;

/** The reason a body nested too deep is refused with, for `field: 'body'`. */
export const TOO_DEEP = `nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`;

/**
 * Whether a parsed JSON value nests arrays and objects more than `max` levels deep. Iterative, so
 * the check itself cannot run out of stack, and it stops at the first value too deep.
 */
export function nestsDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
