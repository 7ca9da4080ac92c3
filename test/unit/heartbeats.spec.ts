import { Heartbeats } from '../../src/watch/heartbeats.js';
import { FakeClock } from '../helpers/fake-clock.js';

describe('Heartbeats: every stream hears one each interval, a slice at a time', () => {
  const INTERVAL = 3_000;
  const setup = (streams: number, slices = 30) => {
    const clock = new FakeClock();
    const heard: number[] = [];
    const beats = new Heartbeats<number>(clock, INTERVAL, (s) => heard.push(s), slices);
    for (let i = 0; i < streams; i++) beats.add(i);
    beats.start();
    return { clock, heard, beats };
  };

  it('writes each slice on its own turn: no turn writes more than its share of the streams', async () => {
    const { clock, heard } = setup(3_000);
    let most = 0;
    for (let turn = 0; turn < 30; turn++) {
      const before = heard.length;
      await clock.advance(INTERVAL / 30);
      most = Math.max(most, heard.length - before);
    }
    expect(most).toBe(100);
    // After one interval every stream has had exactly one.
    expect(heard).toHaveLength(3_000);
    expect(new Set(heard).size).toBe(3_000);
  });

  it('gives each stream one heartbeat per interval, however the streams come and go', async () => {
    const { clock, heard, beats } = setup(10, 5);
    await clock.advance(INTERVAL * 2);
    expect(heard.filter((s) => s === 7)).toHaveLength(2);
    beats.delete(7);
    beats.add(42);
    heard.length = 0;
    await clock.advance(INTERVAL);
    expect(heard).not.toContain(7);
    expect(heard.filter((s) => s === 42)).toHaveLength(1);
    expect(heard).toHaveLength(10);
  });

  it('keeps no timer while no stream is open', async () => {
    const { clock, heard, beats } = setup(0, 5);
    expect(clock.pending).toBe(0);
    beats.add(1);
    expect(clock.pending).toBe(1);
    await clock.advance(INTERVAL);
    expect(heard).toEqual([1]);
    beats.delete(1);
    await clock.advance(INTERVAL);
    expect(clock.pending).toBe(0);
    expect(heard).toEqual([1]);
  });

  it('a stream whose write throws does not end the heartbeats of the others', async () => {
    const clock = new FakeClock();
    const heard: number[] = [];
    const beats = new Heartbeats<number>(
      clock,
      INTERVAL,
      (s) => {
        if (s === 0) throw new Error('write after the socket closed');
        heard.push(s);
      },
      2,
    );
    for (const s of [0, 1, 2, 3]) beats.add(s);
    beats.start();
    // Stream 0's slice throws out of its turn; the next turn is armed all the same.
    await expect(clock.advance(INTERVAL / 2)).rejects.toThrow('write after the socket closed');
    beats.delete(0);
    await clock.advance(INTERVAL * 2);
    expect(heard.filter((s) => s === 1)).toHaveLength(2);
    expect(heard.filter((s) => s === 2)).toHaveLength(2);
  });

  it('stops: no timer left behind', async () => {
    const { clock, heard, beats } = setup(4, 2);
    beats.stop();
    await clock.advance(INTERVAL * 3);
    expect(heard).toHaveLength(0);
    expect(clock.pending).toBe(0);
    beats.start();
    expect(clock.pending).toBe(0);
  });
});
