import { AppError, ErrorCode } from '../common/app-error';
import { Embedder } from '../domain/embedder.port';
import { CoalescingEmbedder } from './coalescing-embedder';

/** Vectors that spell their text's length; each call waits until released. */
class GatedEmbedder extends Embedder {
  readonly model = 'gated';
  readonly dimension = 1;
  readonly calls: string[][] = [];
  private gates: (() => void)[] = [];

  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls.push(texts);
    await new Promise<void>((resolve) => this.gates.push(resolve));
    return texts.map((text) => Float32Array.of(text.length));
  }

  release(): void {
    for (const gate of this.gates.splice(0)) gate();
  }

  async close(): Promise<void> {}
}

const lengths = (vectors: Float32Array[]) => vectors.map((v) => v[0]);
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('CoalescingEmbedder', () => {
  it('starts a call at once on an idle embedder and combines the calls that arrive while it is busy', async () => {
    const inner = new GatedEmbedder();
    const embedder = new CoalescingEmbedder(inner, { maxInFlight: 1, passThroughTexts: 64 });
    const first = embedder.embed(['a']);
    const second = embedder.embed(['bb', 'ccc']);
    const third = embedder.embed(['dddd']);
    await tick();
    expect(inner.calls).toEqual([['a']]);
    inner.release();
    await tick();
    expect(inner.calls).toEqual([['a'], ['bb', 'ccc', 'dddd']]);
    inner.release();
    expect(lengths(await first)).toEqual([1]);
    expect(lengths(await second)).toEqual([2, 3]);
    expect(lengths(await third)).toEqual([4]);
  });

  it('lets a large call through on its own and rejects only the caller that aborts', async () => {
    const inner = new GatedEmbedder();
    const embedder = new CoalescingEmbedder(inner, { maxInFlight: 1, passThroughTexts: 3 });
    const busy = embedder.embed(['a']);
    const large = embedder.embed(['x', 'y', 'z']);
    const controller = new AbortController();
    const aborted = embedder.embed(['gone'], { signal: controller.signal });
    const kept = embedder.embed(['kept']);
    controller.abort(new AppError(ErrorCode.CANCELED, 'stop'));
    await expect(aborted).rejects.toThrow('stop');
    await tick();
    expect(inner.calls).toEqual([['a'], ['x', 'y', 'z']]);
    inner.release();
    await tick();
    expect(inner.calls[2]).toEqual(['kept']);
    inner.release();
    expect(lengths(await busy)).toEqual([1]);
    expect(lengths(await large)).toEqual([1, 1, 1]);
    expect(lengths(await kept)).toEqual([4]);
  });
});
