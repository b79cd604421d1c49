import { AppError, ErrorCode } from '../common/app-error';
import { sumOfSquares } from '../domain/vector-index.port';
import { abortError, embeddableText, l2Normalize, scaleToUnit } from './vectors';

describe('l2Normalize', () => {
  it('scales to unit length without touching its input', () => {
    const input = [3, 4];
    expect(Array.from(l2Normalize(input))).toEqual([expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)]);
    expect(input).toEqual([3, 4]);
  });

  it('leaves a zero vector zero rather than NaN', () => {
    expect(Array.from(l2Normalize([0, 0, 0]))).toEqual([0, 0, 0]);
  });
});

describe('scaleToUnit', () => {
  it('leaves a vector already unit length as it is, and scales one that is not', () => {
    // Squares 1.00000064: unit length in float32 terms, as embedders hand over.
    const unit = Float32Array.from([0.6, 0.8000004]);
    const before = Array.from(unit);
    expect(scaleToUnit(unit)).toBeCloseTo(1, 5);
    expect(Array.from(unit)).toEqual(before);
    const long = Float32Array.from([3, 4]);
    expect(scaleToUnit(long)).toBeCloseTo(25, 5);
    expect(Array.from(long)).toEqual([expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)]);
  });
});

describe('sumOfSquares', () => {
  it('sums every component, whatever the length modulo its four sums', () => {
    for (let n = 0; n <= 9; n++) expect(sumOfSquares(Array.from({ length: n }, (_, i) => i + 1))).toBe((n * (n + 1) * (2 * n + 1)) / 6);
    expect(sumOfSquares(Float32Array.from([1, 2, Number.NaN, 4, 5]))).toBeNaN();
  });
});

describe('embeddableText', () => {
  it('replaces only the empty string', () => {
    expect(embeddableText('')).toBe(' ');
    expect(embeddableText('a')).toBe('a');
  });
});

describe('abortError', () => {
  it('passes on an AppError reason and wraps anything else as CANCELED', () => {
    const timeout = new AppError(ErrorCode.TIMEOUT, 'too slow');
    expect(abortError(AbortSignal.abort(timeout))).toBe(timeout);
    expect(abortError(AbortSignal.abort())).toMatchObject({ code: ErrorCode.CANCELED });
  });
});
