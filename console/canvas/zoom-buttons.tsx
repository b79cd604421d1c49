import type { CanvasControl } from './canvas';

/** The zoom buttons, beside the canvas rather than over its nodes. */
export function ZoomButtons({ control }: { control: { current: CanvasControl | null } }) {
  return (
    <span class="zoom-buttons" role="group" aria-label="Zoom">
      <button type="button" class="secondary" onClick={() => control.current?.zoomBy(1.2)} aria-label="Zoom in" title="Zoom in (+)">
        +
      </button>
      <button type="button" class="secondary" onClick={() => control.current?.zoomBy(1 / 1.2)} aria-label="Zoom out" title="Zoom out (-)">
        −
      </button>
      <button type="button" class="secondary" onClick={() => control.current?.fit()} aria-label="Fit the workflow in view" title="Fit (0)">
        Fit
      </button>
    </span>
  );
}
