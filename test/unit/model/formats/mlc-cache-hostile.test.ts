// Issue 12, item 18: a tensor-cache.json (MLC) from a hostile or broken mirror is refused with a named
// error before any shard is read: overlapping records, negative sizes, duplicate names, paths that
// leave the model folder.
import { describe, expect, test } from 'vitest';
import { parseMlcCache } from '../../../../src/model/formats/mlc.ts';
import { HeaderError, TensorOffsetError } from '../../../../src/model/errors.ts';

type Rec = { name: string; shape: number[]; dtype: string; format: string; nbytes: number; byteOffset: number };
type Shard = { dataPath: string; format: string; nbytes: number; md5sum: string; records: Rec[] };

/** Two shards of two float16 [4] tensors each (8 bytes apiece), as tvm writes them. */
function cache(): { metadata: object; records: Shard[] } {
  const rec = (name: string, byteOffset: number): Rec => ({ name, shape: [4], dtype: 'float16', format: 'f32-to-bf16', nbytes: 8, byteOffset });
  return {
    metadata: { ParamSize: 4, ParamBytes: 32, BitsPerParam: 16 },
    records: [
      { dataPath: 'params_shard_0.bin', format: 'raw-shard', nbytes: 16, md5sum: '', records: [rec('a', 0), rec('b', 8)] },
      { dataPath: 'params_shard_1.bin', format: 'raw-shard', nbytes: 16, md5sum: '', records: [rec('c', 0), rec('d', 8)] },
    ],
  };
}
const parse = (json: object) => () => parseMlcCache(new TextEncoder().encode(JSON.stringify(json)), 'tensor-cache.json');

describe('item 18: tensor-cache.json', () => {
  test('item 18: the well-formed cache parses', () => {
    const { entries, shards } = parse(cache())();
    expect(entries.map((e) => [e.name, e.file, e.start, e.end])).toEqual([
      ['a', 'params_shard_0.bin', 0, 8], ['b', 'params_shard_0.bin', 8, 16], ['c', 'params_shard_1.bin', 0, 8], ['d', 'params_shard_1.bin', 8, 16],
    ]);
    expect(shards.map((s) => [s.file, s.nbytes])).toEqual([['params_shard_0.bin', 16], ['params_shard_1.bin', 16]]);
  });

  test('item 18: overlapping records in one shard are a TensorOffsetError naming both', () => {
    const c = cache();
    c.records[0]!.records[1]!.byteOffset = 4;
    c.records[0]!.nbytes = 12;
    expect(parse(c)).toThrow(TensorOffsetError);
    expect(parse(c)).toThrow(/tensor "b": bytes \[4, 12\) overlap tensor "a" \[0, 8\) in params_shard_0\.bin/);
  });

  test.each([
    ['record nbytes', (c: ReturnType<typeof cache>) => { c.records[0]!.records[0]!.nbytes = -8; }, /nbytes -8/],
    ['shard nbytes', (c: ReturnType<typeof cache>) => { c.records[1]!.nbytes = -16; c.records[1]!.records = []; }, /nbytes -16/],
  ])('item 18: a negative %s is refused', (_what, mutate, message) => {
    const c = cache();
    mutate(c);
    expect(parse(c)).toThrow(message);
    try { parse(c)(); } catch (e) { expect((e as Error).name).toMatch(/^(TensorOffsetError|HeaderError)$/); }
  });

  test('item 18: a tensor named twice (in another shard or the same one) is a HeaderError', () => {
    const c = cache();
    c.records[1]!.records[0]!.name = 'a';
    expect(parse(c)).toThrow(HeaderError);
    expect(parse(c)).toThrow(/tensor "a".*(named twice|appears twice)/);
    const d = cache();
    d.records[0]!.records[1]!.name = 'a';
    expect(parse(d)).toThrow(/tensor "a"/);
  });

  test('item 18: a shard file listed twice is a HeaderError', () => {
    const c = cache();
    c.records[1]!.dataPath = 'params_shard_0.bin';
    c.records[1]!.records.forEach((r, i) => { r.name = `e${i}`; });
    expect(parse(c)).toThrow(HeaderError);
    expect(parse(c)).toThrow(/params_shard_0\.bin.*twice/);
  });

  test.each([
    ['../../etc/passwd'], ['/etc/passwd'], ['sub/../../x.bin'], ['https://evil.example/x.bin'], ['C:\\x.bin'], ['a\\..\\..\\x.bin'], [''], ['.'],
  ])('item 18: dataPath %j leaves the model folder: HeaderError', (dataPath) => {
    const c = cache();
    c.records[0]!.dataPath = dataPath;
    expect(parse(c)).toThrow(HeaderError);
    expect(parse(c)).toThrow(/dataPath/);
  });

  test('item 18: a plain sub-folder and a "?partitions" suffix are still fine', () => {
    const c = cache();
    c.records[0]!.dataPath = 'weights/params_shard_0.bin?partitions=2';
    expect(parse(c)().shards[0]!.file).toBe('weights/params_shard_0.bin');
  });
});
