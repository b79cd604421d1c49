import { followUnless, raceSignal } from './signals';

describe('followUnless', () => {
  const never = () => new Promise<never>(() => undefined);

  it('aborts with its parent for the reasons it follows, ending the races on it', async () => {
    const parent = new AbortController();
    const follower = followUnless(parent.signal, (reason) => reason !== 'stop');
    const race = raceSignal(never(), follower.signal);
    parent.abort('cancel');
    expect(follower.signal.aborted).toBe(true);
    expect(follower.signal.reason).toBe('cancel');
    await expect(race).rejects.toBe('cancel');
  });

  it('stays live for the reasons it does not follow, and once disposed', async () => {
    const stopped = new AbortController();
    const kept = followUnless(stopped.signal, (reason) => reason !== 'stop');
    stopped.abort('stop');
    expect(kept.signal.aborted).toBe(false);

    const canceled = new AbortController();
    const disposed = followUnless(canceled.signal, () => true);
    disposed.dispose();
    canceled.abort('cancel');
    expect(disposed.signal.aborted).toBe(false);
    await expect(raceSignal(Promise.resolve(1), kept.signal)).resolves.toBe(1);
  });

  it('is aborted from the start when its parent already is, for a reason it follows', async () => {
    const parent = new AbortController();
    parent.abort('cancel');
    const follower = followUnless(parent.signal, () => true);
    expect(follower.signal.reason).toBe('cancel');
    await expect(raceSignal(never(), follower.signal)).rejects.toBe('cancel');
  });
});
