import { NODE_HEIGHT } from './workflow-graph';

/** A far label's height on screen, in px (see .node-far): one line of 12 px text. */
const LABEL_HEIGHT = 16;
/** A far label is at most this many canvas units wide, the distance from one column of nodes to the next. */
const LABEL_SPAN = 250;

/**
 * Far out, each node's name and status is a label of constant size: where labels would cover one
 * another, the later ones (in the definition's order) are left out, so those shown stay readable;
 * the nodes left without one keep their status colour and name in their tooltip. Linear in the
 * nodes (labels are bucketed by row), run when the zoom or the nodes change, never during a pan.
 * `k` null (near enough to read the nodes themselves): every label is left to the stylesheet.
 */
export function labelCulling(world: HTMLElement, k: number | null): void {
  const labels = world.querySelectorAll<HTMLElement>('.canvas-node > .node-far');
  if (k === null) {
    for (const label of labels) label.classList.remove('far-hidden');
    return;
  }
  const rows = new Map<number, { left: number; right: number; top: number }[]>();
  for (const label of labels) {
    const node = label.parentElement!;
    const left = parseFloat(node.style.left) * k;
    const top = (parseFloat(node.style.top) + NODE_HEIGHT / 2) * k - LABEL_HEIGHT / 2;
    const right = left + Math.min((label.textContent ?? '').length * 7 + 8, LABEL_SPAN * k);
    const row = Math.floor(top / LABEL_HEIGHT);
    const clash = [row - 1, row, row + 1].some((r) =>
      rows.get(r)?.some((o) => o.left < right && left < o.right && Math.abs(o.top - top) < LABEL_HEIGHT),
    );
    label.classList.toggle('far-hidden', clash);
    if (!clash) {
      const list = rows.get(row) ?? [];
      list.push({ left, right, top });
      rows.set(row, list);
    }
  }
}
