import type { Definition, FieldProblem } from '../api-types';
import { placeProblem, type ProblemPlace } from '../canvas/workflow-graph';

/** A problem placed on the canvas: the server's refusal, or (advisory) the console's own check. */
export interface Placed extends ProblemPlace {
  reason: string;
  advisory: boolean;
  original: FieldProblem;
}

/** What the server refused, and the definition it refused. */
export interface Refusal {
  problems: FieldProblem[];
  sent: Definition | null;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The problems the editor shows, each once: the server's refusal for what is still as it was sent
 * (a node edited since, even back to its saved value, is judged again at the next save), then the
 * console's own check for what the server did not already name.
 */
export function placeProblems(refusal: Refusal, check: FieldProblem[], definition: Definition | null): Placed[] {
  const standing = refusal.problems
    .map((p) => ({ ...placeProblem(p, refusal.sent), reason: p.reason, advisory: false, original: p }))
    .filter((p) => {
      if (!definition || !refusal.sent) return true;
      if (p.nodeId === undefined) return same(definition.nodes, refusal.sent.nodes) && same(definition.edges, refusal.sent.edges);
      return same(
        definition.nodes.find((n) => n.id === p.nodeId),
        refusal.sent.nodes.find((n) => n.id === p.nodeId),
      );
    });
  const named = new Set(standing.map((p) => `${p.nodeId ?? ''}|${p.field}`));
  const advice = check
    .map((p) => ({ ...placeProblem(p, definition), reason: p.reason, advisory: true, original: p }))
    .filter((p) => !named.has(`${p.nodeId ?? ''}|${p.field}`));
  return [...standing, ...advice];
}

/** Reasons as the engine words them, said in plain words to the person editing. */
const PLAIN: [RegExp, string][] = [
  [/^not connected: every node except the trigger needs an incoming edge$/, 'is not connected: connect an output of another node to it'],
  [/^needs exactly one trigger node$/, 'has no trigger: add one (a webhook trigger, a schedule, ...) to start its runs'],
];

/** A field of a node in words: `parameters.url` is the parameter "url", `(node)` the node itself. */
export function fieldWords(field: string): string {
  if (!field || field === '(node)') return '';
  const parameter = /^parameters\.([^.[]+)(.*)$/.exec(field);
  if (parameter) return `parameter "${parameter[1]}"${parameter[2] ? ` (${parameter[2].replace(/^\./, '')})` : ''}`;
  const mode = /^parameterMode\.(.+)$/.exec(field);
  if (mode) return `the mode of parameter "${mode[1]}"`;
  return field;
}

/** One sentence for a problem of a node (its name said by the list it is in). */
export function plainReason(problem: Pick<Placed, 'field' | 'reason'>): string {
  const reason = PLAIN.find(([pattern]) => pattern.test(problem.reason))?.[1] ?? problem.reason;
  const where = fieldWords(problem.field);
  return where ? `${where[0].toUpperCase()}${where.slice(1)}: ${reason}` : `${reason[0].toUpperCase()}${reason.slice(1)}`;
}
