import { useEffect, useRef, useState } from 'preact/hooks';
import { api, encode } from '../api-client';
import { TERMINAL, type Definition, type Page, type Run, type RunSummary } from '../api-types';
import type { CanvasEdge } from '../canvas/canvas';
import { runEdges, stepStatus } from '../canvas/run-drawing';
import { useLoad, usePolling } from '../ui';

/** How often a run in progress is read again while it is drawn. */
const POLL_MS = 600;
/** Runs looked through, newest first, for one that reached a node. */
const RECENT = 10;

/** The node's step carries data: it ran (or was passed through) in that run. */
const reaches = (run: Run, nodeId: string) =>
  run.steps.some((s) => s.nodeId === nodeId && (s.input !== undefined || s.output !== undefined) && s.status !== 'running');

export interface RunData {
  /** The run drawn on the canvas: started, tested or loaded here; null when none is. */
  shown: Run | null;
  shownError: unknown;
  /** Draws run `id` (null: none), read again until it ends. */
  show(id: string | null): void;
  /** The workflow's recent runs, newest first (the "debug in editor" list). */
  recent: RunSummary[];
  /** The newest run, what a node test without other data starts from. */
  latestId: string | null;
  /** The newest run that reached `nodeId` (the shown one first): its data is what the node view and expressions show. */
  runFor(nodeId: string | null): Run | null;
  /** The node whose data is wanted next (the one selected or open): runs are looked through for it. */
  want(nodeId: string | null): void;
}

/**
 * The runs of the workflow as the editor uses them: the one drawn live on the canvas, and for each
 * node the latest run that reached it (a node test of another node does not hide the data of this
 * one). Run details are fetched one at a time, only until a node's run is found, and kept once ended.
 * Held by the page, not the editor, so that a save (which starts the editor afresh) keeps the run drawn.
 */
export function useRunData(workflowId: string): RunData {
  const [wanted, setWanted] = useState<string | null>(null);
  const [shownId, setShownId] = useState<string | null>(null);
  const shown = useLoad(() => (shownId ? api<Run>('GET', `/api/v1/runs/${encode(shownId)}`) : Promise.resolve(null)), [shownId]);
  const running = Boolean(shown.data && !TERMINAL.includes(shown.data.status));
  usePolling(shown.reload, POLL_MS, running);
  const finished = shown.data && !running ? `${shown.data.id}:${shown.data.status}` : '';
  const recent = useLoad(
    () => api<Page<RunSummary>>('GET', `/api/v1/runs?workflowId=${encode(workflowId)}&limit=${RECENT}`),
    [workflowId, finished],
  );
  const cache = useRef(new Map<string, Run>());
  const [, setLoaded] = useState(0);

  useEffect(() => {
    if (!wanted || !recent.data) return;
    let live = true;
    void (async () => {
      for (const summary of recent.data!.items) {
        let run = cache.current.get(summary.id);
        if (!run) {
          run = await api<Run>('GET', `/api/v1/runs/${encode(summary.id)}`);
          if (TERMINAL.includes(run.status)) cache.current.set(run.id, run);
          if (live) setLoaded((n) => n + 1);
        }
        if (!live || reaches(run, wanted)) return;
      }
    })().catch(() => {
      // No data to show beside the node: the node view says so.
    });
    return () => {
      live = false;
    };
  }, [wanted, recent.data]);

  const items = recent.data?.items ?? [];
  return {
    shown: shown.data ?? null,
    shownError: shown.error,
    show: setShownId,
    want: setWanted,
    recent: items,
    latestId: items[0]?.id ?? null,
    runFor(nodeId) {
      if (!nodeId) return shown.data ?? null;
      if (shown.data && reaches(shown.data, nodeId)) return shown.data;
      for (const summary of items) {
        const run = cache.current.get(summary.id);
        if (run && reaches(run, nodeId)) return run;
      }
      return null;
    },
  };
}

/**
 * A run as the canvas draws it while it happens: each node's step status, the nodes whose turn
 * has come (every node before them done) drawn running, and the edges data went along, those into
 * a running node moving. A node test runs a few nodes only: the others are left undecorated.
 */
export function liveDrawing(definition: Definition, run: Run): { status: Map<string, string>; edges: CanvasEdge[] } {
  const steps = new Map(run.steps.map((s) => [s.nodeId, s]));
  const status = new Map<string, string>();
  for (const node of definition.nodes) {
    const drawn = stepStatus(steps.get(node.id));
    if (drawn) status.set(node.id, drawn);
  }
  const partial = Boolean(run.nodeTest);
  const inProgress = !TERMINAL.includes(run.status) && run.status !== 'waiting';
  if (inProgress) {
    const edges = definition.edges ?? [];
    for (const node of definition.nodes) {
      if (status.has(node.id)) continue;
      const into = edges.filter((e) => e.to === node.id);
      const started = into.length ? into.every((e) => steps.has(e.from)) : !partial && run.steps.length === 0;
      const tested = partial && run.nodeTest?.nodeId === node.id;
      if (started || tested) status.set(node.id, 'running');
    }
  }
  const edges = runEdges(definition, run, partial || inProgress).map((edge) =>
    status.get(edge.to) === 'running' && steps.has(edge.from) ? { ...edge, status: 'flowing' as const } : edge,
  );
  return { status, edges };
}
