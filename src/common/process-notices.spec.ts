import { Notice, ProcessMessage, ProcessNotices } from './process-notices';

/** Two processes' channels linked as the supervisor links them: what one sends, the other receives. */
function linkedPair() {
  const a = new ProcessNotices();
  const b = new ProcessNotices();
  const sent: ProcessMessage[] = [];
  // Messages carry the sender's id; both live in this test's process, so B's are renamed.
  a.connect((message) => {
    sent.push(message);
    b.receive({ ...message, from: 'a' } as ProcessMessage);
  }, 1);
  b.connect((message) => {
    sent.push(message);
    a.receive({ ...message, from: 'b' } as ProcessMessage);
  }, 1);
  return { a, b, sent };
}

describe('ProcessNotices', () => {
  it('sends a run notice only to processes watching the run, until they stop watching', () => {
    const { a, b, sent } = linkedPair();
    const heard: Notice[] = [];
    a.subscribe((notice) => heard.push(notice));

    b.publish({ runId: 'run_0', kind: 'finished' });
    expect(sent.filter((m) => m.service === 'notice')).toEqual([]);

    const unwatch = a.watch('run_1');
    const again = a.watch('run_1');
    b.publish({ runId: 'run_1', kind: 'progress', event: { type: 'token', text: 'hi' } });
    b.publish({ runId: 'run_2', kind: 'finished' });
    expect(heard).toEqual([{ runId: 'run_1', kind: 'progress', event: { type: 'token', text: 'hi' } }]);
    // Watched twice here, announced once.
    expect(sent.filter((m) => m.service === 'watch')).toHaveLength(1);

    unwatch();
    unwatch();
    b.publish({ runId: 'run_1', kind: 'finished' });
    expect(heard).toHaveLength(2);
    again();
    b.publish({ runId: 'run_1', kind: 'finished' });
    expect(heard).toHaveLength(2);
    expect(sent.filter((m) => m.service === 'unwatch')).toHaveLength(1);
  });

  it('answers a watch that comes after the run finished unwatched: the accepting process was held before it could send it', () => {
    const { a, b, sent } = linkedPair();
    const heard: Notice[] = [];
    a.subscribe((notice) => heard.push(notice));
    b.publish({ runId: 'run_1', kind: 'finished' });
    b.publish({ runId: 'run_2', kind: 'progress', event: { type: 'token', text: 'hi' } });
    expect(sent.filter((m) => m.service === 'notice')).toEqual([]);

    a.watch('run_1');
    a.watch('run_2');
    // Only a finish is remembered; once told, a second watch of it hears nothing more.
    expect(heard).toEqual([{ runId: 'run_1', kind: 'finished' }]);
    a.watch('run_1')();
    expect(heard).toHaveLength(1);
    // Still watched: if the run goes on in b (it had stopped at a wait), a hears of it.
    b.publish({ runId: 'run_1', kind: 'finished' });
    expect(heard).toHaveLength(2);
  });

  it('remembers the last 1,024 runs that finished unwatched', () => {
    const { a, b } = linkedPair();
    const heard: Notice[] = [];
    a.subscribe((notice) => heard.push(notice));
    for (let i = 0; i <= 1024; i++) b.publish({ runId: `run_${i}`, kind: 'finished' });
    a.watch('run_0');
    a.watch('run_1');
    expect(heard).toEqual([{ runId: 'run_1', kind: 'finished' }]);
  });

  it("forgets a gone process's watches, and tells a late joiner what is watched", () => {
    const { a, b, sent } = linkedPair();
    a.watch('run_1');
    b.receive({ service: 'gone', from: 'a' });
    const before = sent.length;
    b.publish({ runId: 'run_1', kind: 'finished' });
    expect(sent.length).toBe(before);
    expect(a.watches()).toEqual([{ service: 'watch', from: expect.any(String), runId: 'run_1' }]);
  });

  it('keeps Redis (which reaches every process) over the supervisor relay', () => {
    const notices = new ProcessNotices();
    const redis: ProcessMessage[] = [];
    const relay: ProcessMessage[] = [];
    const toRedis = (m: ProcessMessage) => redis.push(m);
    notices.connect(toRedis, 2);
    notices.connect((m) => relay.push(m), 1);
    notices.watch('run_1');
    expect(redis).toHaveLength(1);
    expect(relay).toHaveLength(0);
    notices.disconnect(toRedis);
    expect(notices.connected).toBe(false);
  });
});
