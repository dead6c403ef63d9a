// Project history (src/app/project-history.ts) over the memory storage: a point before every change that
// changes something, a restore undoes every later change (writes back, removes what did not exist, and is
// itself undoable), the limits drop the oldest points, and stored garbage is skipped and deleted.
// The IndexedDB storage is exercised in the browser (e2e/app-keeps.test.ts).
import { describe, expect, test } from 'vitest';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { HISTORY_LIMITS, MemoryHistoryStorage, ProjectHistory, readPoint, recordingFiles } from '../../../src/app/project-history.ts';

async function setup(initial: Record<string, string> = {}) {
  const storage = new MemoryHistoryStorage();
  const raw = new MemoryFiles(initial);
  const history = await ProjectHistory.open(storage);
  let n = 0;
  const files = recordingFiles(raw, history, (path) => ({ label: `write_file ${path}`, request: 1, step: ++n, call: n }));
  return { storage, raw, history, files };
}

const snapshot = async (files: MemoryFiles) =>
  Object.fromEntries(await Promise.all((await files.allFiles()).map(async (p) => [p, await files.readText(p)] as const)));

describe('project history', () => {
  test('each change keeps only the file it changes, as it was (or that it did not exist)', async () => {
    const { history, files } = await setup({ 'index.html': '<h1>A</h1>' });
    await files.write('index.html', '<h1>B</h1>');
    await files.write('app.js', 'let n = 0;');
    await files.write('app.js', 'let n = 0;');                // unchanged: no point
    expect(history.points.map((p) => p.changes.map((c) => [c.path, c.before && new TextDecoder().decode(c.before)]))).toEqual([
      [['index.html', '<h1>A</h1>']],
      [['app.js', null]],
    ]);
    expect(history.points.map((p) => [p.id, p.label, p.step])).toEqual([[1, 'write_file index.html', 1], [2, 'write_file app.js', 2]]);
  });

  test('restore to a point undoes every later change, newest first, and can itself be undone', async () => {
    const { raw, history, files } = await setup({ 'index.html': 'v1' });
    await files.write('index.html', 'v2');                    // point 1
    await files.write('app.js', 'a1');                        // point 2 (app.js did not exist)
    await files.write('index.html', 'v3');                    // point 3
    await files.write('app.js', 'a2');                        // point 4
    const second = history.points[1]!;
    const result = await history.restore(raw, second.id);
    expect(result.written).toEqual(['index.html']);
    expect(result.removed).toEqual(['app.js']);
    expect(await snapshot(raw)).toEqual({ 'index.html': 'v2' });  // just before point 2: v2, and no app.js
    // The restore was recorded: restoring to before it brings back what it undid.
    const restorePoint = history.points[history.points.length - 1]!;
    expect(restorePoint.label).toBe('restore to before write_file app.js');
    await history.restore(raw, restorePoint.id);
    expect(await snapshot(raw)).toEqual({ 'index.html': 'v3', 'app.js': 'a2' });
    expect(history.points[history.points.length - 1]!.label).toBe('undo of restore to before write_file app.js');
    await history.restore(raw, history.points[0]!.id);
    expect(await snapshot(raw)).toEqual({ 'index.html': 'v1' });
  });

  test('survives a reopen over the same storage; a restore to the state it is already in changes nothing', async () => {
    const { storage, raw, files } = await setup({ 'a.txt': 'one' });
    await files.write('a.txt', 'two');
    const reopened = await ProjectHistory.open(storage);
    expect(reopened.points).toHaveLength(1);
    await reopened.restore(raw, 1);
    expect(await raw.readText('a.txt')).toBe('one');
    const again = await reopened.restore(raw, 1);             // a.txt is already as it was before point 1
    expect(again.written).toEqual([]);
    expect(reopened.points).toHaveLength(2);                  // the first restore's point only
  });

  test('bounded: the oldest points go first, by count and by bytes; the newest always stays', async () => {
    const { history, files } = await setup();
    for (let i = 0; i <= HISTORY_LIMITS.points + 4; i++) await files.write('a.txt', `version ${i}`);
    expect(history.points).toHaveLength(HISTORY_LIMITS.points);
    expect(history.points[0]!.id).toBe(6);                     // points 1–5 dropped
    const big = 'x'.repeat(HISTORY_LIMITS.bytes / 2 + 1);
    await files.write('big.txt', big);
    await files.write('big.txt', big + 'y');                  // keeps ~half the limit
    await files.write('big.txt', big + 'z');                  // another half: the older big one must go
    const kept = history.points.reduce((s, p) => s + p.changes.reduce((t, c) => t + (c.before?.byteLength ?? 0), 0), 0);
    expect(kept).toBeLessThanOrEqual(HISTORY_LIMITS.bytes);
    expect(history.points[history.points.length - 1]!.changes[0]!.before!.byteLength).toBe(big.length + 1);
  });

  test('what storage gives back is checked: garbage is skipped and deleted, good points kept', async () => {
    const storage = new MemoryHistoryStorage();
    const good = { id: 3, at: 1, label: 'write_file a.txt', step: 2, changes: [{ path: 'a.txt', before: new Uint8Array([104, 105]) }] };
    storage.rows.set(3, good);
    storage.rows.set('x', 'not a point');
    storage.rows.set(4, { ...good, id: 4, changes: [{ path: '../etc/passwd', before: null }] });
    storage.rows.set(5, { ...good, id: 5, changes: [{ path: 'a.txt', before: 'text, not bytes' }] });
    storage.rows.set(6, { ...good, id: 6, step: -1 });
    storage.rows.set(7, { ...good, id: 7, changes: [] });
    storage.rows.set(8, null);
    const history = await ProjectHistory.open(storage);
    expect(history.points.map((p) => p.id)).toEqual([3]);
    expect(history.skipped).toBe(6);
    expect([...storage.rows.keys()]).toEqual([3]);
    expect(readPoint(good)).toEqual(good);
  });

  test('a point that cannot be stored does not stop the write', async () => {
    const storage = new MemoryHistoryStorage();
    storage.put = async () => { throw new Error('QuotaExceededError'); };
    const raw = new MemoryFiles();
    const history = await ProjectHistory.open(storage);
    const files = recordingFiles(raw, history, () => ({ label: 'hand edit' }));
    await files.write('a.txt', 'kept');
    expect(await raw.readText('a.txt')).toBe('kept');
    expect(history.points).toHaveLength(0);
  });
});
