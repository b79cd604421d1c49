import { encodeFrame, FrameReader, FrameTooLarge } from './sandbox-protocol';

describe('FrameReader', () => {
  it('cuts a stream into frames, however it arrives', () => {
    const frames: [unknown, string][] = [];
    const reader = new FrameReader((header, payload) => frames.push([header, payload]), 1024);
    const bytes = Buffer.concat([encodeFrame({ id: 1 }, 'one'), encodeFrame({ id: 2 }, 'twö')]);
    for (let i = 0; i < bytes.length; i += 3) reader.push(bytes.subarray(i, i + 3));
    expect(frames).toEqual([
      [{ id: 1 }, 'one'],
      [{ id: 2 }, 'twö'],
    ]);
  });

  it('refuses a frame declared longer than it takes before gathering any of it', () => {
    const reader = new FrameReader(() => undefined, 64);
    const frame = encodeFrame({ id: 1 }, 'x'.repeat(100));
    expect(() => reader.push(frame.subarray(0, 8))).toThrow(FrameTooLarge);
  });
});
