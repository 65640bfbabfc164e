// Edits coalesced per frame (frontend/app/per-frame.ts) and work put after the frame (frontend/after-frame.ts),
// with the animation frames stubbed: the first edit in a frame at once, the newest of the rest at the next frame.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { afterFrame } from '../../frontend/after-frame.js';
import { dropWaiting, perFrame } from '../../frontend/app/per-frame.js';

let frames = new Map<number, () => void>();
let nextId = 0;
const runFrame = () => {
  const due = [...frames.values()];
  frames = new Map();
  for (const f of due) f();
};

beforeEach(() => {
  frames = new Map();
  vi.stubGlobal('requestAnimationFrame', (f: () => void) => {
    frames.set(++nextId, f);
    return nextId;
  });
  vi.stubGlobal('cancelAnimationFrame', (id: number) => frames.delete(id));
});
afterEach(() => {
  // close the frame so that the next test starts with none open
  runFrame();
  runFrame();
  vi.unstubAllGlobals();
});

describe('perFrame', () => {
  it('commits the first edit at once and the newest of a field at the next frame', () => {
    const done: string[] = [];
    expect(perFrame('a', () => done.push('a1'))).toBe(true);
    expect(perFrame('a', () => done.push('a2'))).toBe(false);
    expect(perFrame('b', () => done.push('b1'))).toBe(false);
    expect(perFrame('a', () => done.push('a3'))).toBe(false);
    expect(done).toEqual(['a1']);
    runFrame();
    expect(done).toEqual(['a1', 'b1', 'a3']);
    runFrame(); // a frame with nothing waiting closes: the next edit is committed at once
    expect(perFrame('a', () => done.push('a4'))).toBe(true);
    expect(done.at(-1)).toBe('a4');
  });
  it('drops a waiting edit that a newer, unreadable one replaced', () => {
    const done: string[] = [];
    perFrame('a', () => done.push('a1'));
    perFrame('a', () => done.push('a2'));
    dropWaiting('a');
    runFrame();
    expect(done).toEqual(['a1']);
  });
});

describe('afterFrame', () => {
  it('runs after the next frame, and not once cancelled', async () => {
    const done: string[] = [];
    afterFrame(() => done.push('x'));
    const cancel = afterFrame(() => done.push('y'));
    cancel();
    expect(done).toEqual([]);
    runFrame();
    await new Promise((r) => setTimeout(r, 0));
    expect(done).toEqual(['x']);
  });
});
