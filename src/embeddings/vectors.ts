import { AppError, ErrorCode } from '../common/app-error';
import { sumOfSquares as squaresOf } from '../domain/vector-index.port';

/** Scales `values` to unit length in a new Float32Array; a zero vector stays zero rather than NaN. */
export function l2Normalize(values: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(values);
  scaleToUnit(out);
  return out;
}

/**
 * How far from 1 a vector's squared length may be for it to count as unit length, left as it is.
 * Embedders hand over unit vectors (scaled in float32, so within about 1e-7): scaling them again
 * was a pass over every vector that changed nothing but its last bits.
 */
const UNIT_TOLERANCE = 1e-5;

/** Whether a vector of this sum of squares is unit length (within UNIT_TOLERANCE). */
export function isUnitLength(sumOfSquares: number): boolean {
  return Math.abs(sumOfSquares - 1) <= UNIT_TOLERANCE;
}

/**
 * Scales `values` to unit length where they are (a zero vector stays zero, a unit one as it is);
 * returns their sum of squares before, not finite when a component is not (so the pass is also the
 * finite check).
 */
export function scaleToUnit(values: Float32Array): number {
  const sumOfSquares = squaresOf(values);
  if (sumOfSquares === 0 || isUnitLength(sumOfSquares)) return sumOfSquares;
  const scale = 1 / Math.sqrt(sumOfSquares);
  for (let i = 0; i < values.length; i++) values[i] *= scale;
  return sumOfSquares;
}

/**
 * Neither backend can embed an empty string: USE-lite silently drops a trailing empty text from a
 * batch (shifting every vector after it) and OpenAI-compatible servers reject it. A single space
 * embeds as "no content" in both.
 */
export function embeddableText(text: string): string {
  return text.length === 0 ? ' ' : text;
}

/** The AppError an aborted signal stands for: its own reason when that is one, else CANCELED. */
export function abortError(signal: AbortSignal): AppError {
  return signal.reason instanceof AppError
    ? signal.reason
    : new AppError(ErrorCode.CANCELED, 'Embedding was canceled', { cause: signal.reason });
}

/** Cosine distance in [0, 2]; a zero vector is at distance 1 from everything. */
export function cosineDistance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 1 : Math.min(2, Math.max(0, 1 - dot / Math.sqrt(na * nb)));
}
