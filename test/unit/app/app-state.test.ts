// The app's plain-TS state modules: URL parameters, the model catalogue, edit diffs, the file tree, Store.
import { describe, expect, test } from 'vitest';
import { contextWarning, parseAppParams, UrlParamError } from '../../../src/app/url-params.ts';
import { devicesNeeded, GGUF_PRESETS, HYBRID_PRESETS, MODEL_PRESETS, ModelChoiceError, modelName, modelUrlFor, presetContext } from '../../../src/app/models.ts';
import { diffLines, proposedEdit } from '../../../src/app/diff.ts';
import { buildTree, sortedChildren } from '../../../src/app/file-tree.ts';
import { Store } from '../../../src/app/store.ts';

describe('URL parameters', () => {
  test('defaults: 8k context, 4 checkpoints, no room, no replay', () => {
    expect(parseAppParams('')).toEqual({ ckpt: 4, delay: 15 }); // no ?ctx=: the model's default context
  });

  test('?model= ?ctx= ?ckpt= ?room= ?engine= ?agent=replay ?name= ?ask=', () => {
    const room = '0123456789abcdef0123456789abcdef';
    expect(parseAppParams(`?model=Qwen/Qwen3-1.7B&ctx=16384&ckpt=0&room=${room}&engine=reference&agent=replay&script=/s.jsonl&delay=0&name=Phone&ask=1&speed=2.5`)).toEqual({
      model: 'Qwen/Qwen3-1.7B', ctx: 16384, ckpt: 0, room, engine: 'reference', agent: 'replay', script: '/s.jsonl', delay: 0, name: 'Phone', ask: true, speed: 2.5,
    });
    expect(parseAppParams('?agent=replay').script).toBe('/replay/demo.jsonl');
    expect(parseAppParams('?ask=0').ask).toBe(false);
    expect(parseAppParams('?seed=7').seed).toBe(7);
    expect(parseAppParams('?seed=0').seed).toBe(0);
    expect(() => parseAppParams('?seed=-1')).toThrow('?seed= must be a whole number, got "-1"');
    expect(() => parseAppParams(`?seed=${2 ** 32}`)).toThrow(UrlParamError);
    expect(parseAppParams('?draft=%20Qwen/Qwen3-0.6B%20').draft).toBe('Qwen/Qwen3-0.6B');   // the host's draft model
    expect(parseAppParams('?draft=').draft).toBeUndefined();
    expect(parseAppParams('?kv=q8_0').kv).toBe('q8_0');   // the room's KV cache type
    expect(parseAppParams('?kv=f16').kv).toBe('f16');
    expect(parseAppParams('').kv).toBeUndefined();
  });

  test('bad values get a named error that names the parameter', () => {
    const bad = (q: string) => { try { parseAppParams(q); } catch (e) { return e; } return null; };
    const ctx = bad('?ctx=8k') as UrlParamError;
    expect(ctx).toBeInstanceOf(UrlParamError);
    expect(ctx.message).toBe('?ctx= must be a whole number, got "8k"');
    expect((bad('?ctx=100') as Error).message).toBe('?ctx= must be between 256 and 262144, got 100');
    expect((bad('?ckpt=-1') as Error).message).toBe('?ckpt= must be a whole number, got "-1"');
    expect((bad('?room=abc') as Error).message).toMatch(/^\?room= must be a room id of 32 hex digits/);
    expect((bad('?engine=cuda') as Error).message).toBe('?engine= must be webgpu, wasm or reference, got "cuda"');
    expect(parseAppParams('?engine=wasm').engine).toBe('wasm');
    expect(parseAppParams('?engine=wasm&simd=plain')).toMatchObject({ engine: 'wasm', engineOptions: { simd: 'plain' } });
    expect(parseAppParams('?simd=relaxed').engineOptions?.simd).toBe('relaxed');
    expect(parseAppParams('?engine=wasm').engineOptions).toBeUndefined();
    expect((bad('?simd=avx') as Error).message).toBe('?simd= must be auto, relaxed or plain, got "avx"');
    expect(parseAppParams('?engine=wasm&cpu-activations=q8').engineOptions).toEqual({ 'cpu-activations': 'q8' });
    expect((bad('?cpu-activations=int4') as Error).message).toBe('?cpu-activations= must be f32 or q8, got "int4"');
    expect((bad('?kv=q4_0') as Error).message).toBe('?kv= must be f16 or q8_0, got "q4_0"');
    expect((bad('?speed=fast') as Error).message).toBe('?speed= must be a positive number, got "fast"');
    expect((bad('?agent=openai') as Error).message).toMatch(/^\?agent= must be replay/);
  });

  test('a context under 8k warns that tools need about 8k', () => {
    expect(contextWarning(4096)).toMatch(/^Context is 4,096 tokens: tools need about 8k to work well/);
    expect(contextWarning(8192)).toBeNull();
  });
});

describe('model choices', () => {
  test('presets: Qwen3 0.6B/1.7B/4B/8B in MLC q4f16_1 and BF16, and the tiny model first', () => {
    const ids = MODEL_PRESETS.map((p) => p.id);
    expect(ids[0]).toBe('tiny');
    for (const size of ['0.6B', '1.7B', '4B', '8B']) {
      expect(ids).toContain(`mlc-ai/Qwen3-${size}-q4f16_1-MLC`);
      expect(ids).toContain(`Qwen/Qwen3-${size}`);
    }
    expect(MODEL_PRESETS[0]!.note).toMatch(/Random weights, for trying the room/);
  });

  test('Qwen3.5 / 3.6 hybrid presets: 27B and 35B-A3B for a room, 2B–9B for one device; state and its snapshots counted', () => {
    expect(HYBRID_PRESETS.map((p) => p.id)).toEqual([
      'unsloth/Qwen3.5-27B-GGUF:Q4_K_M', 'ggml-org/Qwen3.6-35B-A3B-GGUF:Q4_K_M', 'unsloth/Qwen3.5-9B-GGUF:Q4_K_M',
      'unsloth/Qwen3.5-4B-GGUF:Q4_K_M', 'unsloth/Qwen3.5-2B-GGUF:Q4_K_M',
    ]);
    for (const p of HYBRID_PRESETS) expect(MODEL_PRESETS).toContain(p);
    const [b27, a35, b9, , b2] = HYBRID_PRESETS;
    const GiB = 2 ** 30;
    // 35B-A3B: 10 attention layers (2 KV heads of 256): 20,480 B a token; 30 Gated DeltaNet layers of 2.2 MB state.
    expect([a35!.kvBytesPerToken, a35!.stateBytes]).toEqual([20480, 30 * (3 * 128 * 64 + 32 * 128 * 128) * 4]);
    expect(devicesNeeded(a35!, 8 * GiB, 8192)).toBe(3);     // (21.2 GB + 0.17 GB KV + 6 × 66 MB state) · 1.1 = 23.9 GB
    expect(devicesNeeded(b27!, 8 * GiB, 8192)).toBe(3);
    expect(devicesNeeded(b9!, 8 * GiB, 8192)).toBe(1);
    expect(devicesNeeded(b2!, 4 * GiB, 8192)).toBe(1);
    expect(devicesNeeded({ ...a35!, stateBytes: 0 }, 8 * GiB, 8192) <= devicesNeeded(a35!, 8 * GiB, 8192)).toBe(true);
    expect(modelName('ggml-org/Qwen3.6-35B-A3B-GGUF:Q4_K_M')).toBe('Qwen3.6 35B-A3B · Q4_K_M (GGUF, hybrid MoE)');
  });

  test('GGUF presets: Qwen3 8B, 14B, 30B-A3B and Coder 30B-A3B at Q4_K_M, with how many devices they need', () => {
    expect(GGUF_PRESETS.map((p) => p.id)).toEqual([
      'Qwen/Qwen3-8B-GGUF:Q4_K_M', 'Qwen/Qwen3-14B-GGUF:Q4_K_M', 'Qwen/Qwen3-30B-A3B-GGUF:Q4_K_M', 'unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M',
    ]);
    for (const p of GGUF_PRESETS) expect(MODEL_PRESETS).toContain(p);
    const [q8b, , moe] = GGUF_PRESETS;
    const GiB = 2 ** 30;
    expect(devicesNeeded(q8b!, 8 * GiB, 2048)).toBe(1);
    expect(devicesNeeded(q8b!, 2 * GiB, 2048)).toBe(3);          // 5.03 GB + 0.3 GB KV, +10%: 5.9 GB
    expect(devicesNeeded(moe!, 8 * GiB, 2048)).toBe(3);          // 18.6 GB + 0.2 GB KV, +10%
    expect(devicesNeeded(moe!, 8 * GiB, 32768)).toBe(3);
    expect(devicesNeeded(moe!, 4 * GiB, 32768)).toBe(6);
    expect(devicesNeeded(MODEL_PRESETS[0]!, 8 * GiB, 2048)).toBe(0);   // the tiny model has no size to count
    expect(modelUrlFor('Qwen/Qwen3-8B-GGUF:Q4_K_M', 'http://h:1')).toBe('Qwen/Qwen3-8B-GGUF:Q4_K_M');
    expect(modelName('Qwen/Qwen3-30B-A3B-GGUF:Q4_K_M')).toBe('Qwen3 30B-A3B · Q4_K_M (GGUF, MoE)');
    expect(modelName('someone/Thing-GGUF:Q8_0')).toBe('Thing-GGUF Q8_0');
  });

  test('a choice becomes the URL every device reads', () => {
    expect(modelUrlFor('tiny', 'http://h:1')).toBe('http://h:1/models/tiny');
    expect(modelUrlFor('Qwen/Qwen3-1.7B', 'http://h:1')).toBe('https://huggingface.co/Qwen/Qwen3-1.7B/resolve/main');
    expect(modelUrlFor('Qwen/Qwen3-1.7B@abc123', 'http://h:1')).toBe('https://huggingface.co/Qwen/Qwen3-1.7B/resolve/abc123');
    expect(modelUrlFor('https://cdn.example/m/', 'http://h:1')).toBe('https://cdn.example/m');
    expect(modelUrlFor('/models/other', 'http://h:1')).toBe('http://h:1/models/other');
    expect(() => modelUrlFor('not a model', 'http://h:1')).toThrow(ModelChoiceError);
    expect(() => modelUrlFor('  ', 'http://h:1')).toThrow(/choose a model/);
    expect(modelName('mlc-ai/Qwen3-1.7B-q4f16_1-MLC')).toBe('Qwen3 1.7B · q4f16_1 (MLC)');
    expect(modelName('someone/My-Qwen@v2')).toBe('My-Qwen');
  });
});

describe('edit diffs for approvals', () => {
  test('changed lines with 3 lines of context, unchanged runs folded', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const after = before.replace('line 10\n', 'line ten\n');
    expect(diffLines(before, after)).toEqual([
      { op: 'skip', count: 7 },
      { op: 'same', text: 'line 7' }, { op: 'same', text: 'line 8' }, { op: 'same', text: 'line 9' },
      { op: 'del', text: 'line 10' }, { op: 'add', text: 'line ten' },
      { op: 'same', text: 'line 11' }, { op: 'same', text: 'line 12' }, { op: 'same', text: 'line 13' },
      { op: 'skip', count: 6 },
    ]);
    expect(diffLines('', 'a\nb\n')).toEqual([{ op: 'add', text: 'a' }, { op: 'add', text: 'b' }]);
  });

  test('write_file (new, replace, append) and edit_file (exact, or not found as written)', () => {
    expect(proposedEdit('write_file', { path: 'a.txt', content: 'x\n' }, null)).toEqual({ path: 'a.txt', before: '', after: 'x\n', isNew: true });
    expect(proposedEdit('write_file', { path: 'a.txt', content: 'y\n', append: true }, 'x\n')).toEqual({ path: 'a.txt', before: 'x\n', after: 'x\ny\n', isNew: false });
    expect(proposedEdit('edit_file', { path: 'a.js', old: 'let n = 0;', new: 'let n = 1;' }, 'a();\nlet n = 0;\n').after).toBe('a();\nlet n = 1;\n');
    const loose = proposedEdit('edit_file', { path: 'a.js', old: 'missing', new: 'x' }, 'a();\n');
    expect(loose.before).toBe('missing');
    expect(loose.note).toMatch(/not in the file exactly as written/);
  });
});

test('file paths become a tree, folders first', () => {
  const tree = buildTree(['index.html', 'src/game.js', 'src/lib/util.js', 'about.html']);
  expect(sortedChildren(tree).map((n) => `${n.path}${n.isFile ? '' : '/'}`)).toEqual(['src/', 'about.html', 'index.html']);
  const src = tree.children.get('src')!;
  expect(sortedChildren(src).map((n) => n.path)).toEqual(['src/lib', 'src/game.js']);
});

test('Store batches changes into one notification per microtask', async () => {
  const store = new Store({ a: 1, b: 'x' });
  const seen: { a: number; b: string }[] = [];
  store.subscribe((v) => seen.push(v));
  store.set({ a: 2 });
  store.set({ b: 'y' });
  expect(seen).toEqual([]);
  await Promise.resolve();
  expect(seen).toEqual([{ a: 2, b: 'y' }]);
});

describe('the start screen\'s fit lines', () => {
  const GiB = 2 ** 30;
  test('each preset\'s default context follows defaultContextFor\'s rule: 8,192 up to 4B, 16,384 bigger dense, 32,768 MoE', () => {
    const ctx = (id: string) => presetContext(MODEL_PRESETS.find((p) => p.id === id)!);
    expect(ctx('mlc-ai/Qwen3-0.6B-q4f16_1-MLC')).toBe(8192);
    expect(ctx('Qwen/Qwen3-4B')).toBe(8192);
    expect(ctx('Qwen/Qwen3-8B')).toBe(16384);
    expect(ctx('Qwen/Qwen3-14B-GGUF:Q4_K_M')).toBe(16384);
    expect(ctx('Qwen/Qwen3-30B-A3B-GGUF:Q4_K_M')).toBe(32768);
    expect(ctx('ggml-org/Qwen3.6-35B-A3B-GGUF:Q4_K_M')).toBe(32768);
    expect(ctx('tiny')).toBe(0);
    // Every preset but the tiny model prints a real context and a device count.
    for (const p of MODEL_PRESETS.filter((m) => m.id !== 'tiny')) {
      expect(presetContext(p), p.id).toBeGreaterThan(0);
      expect(devicesNeeded(p, 4 * GiB, presetContext(p)), p.id).toBeGreaterThan(0);
    }
  });

  test('MLC and BF16 presets count devices too, KV at the default context included', () => {
    const bf16 = MODEL_PRESETS.find((p) => p.id === 'Qwen/Qwen3-8B')!;
    // 16 GB + 36 layers × 2 × 8 × 128 × 2 B × 16,384 tokens (2.4 GB), +10%: 20.2 GB over 8 GiB devices → 3.
    expect(bf16.kvBytesPerToken).toBe(36 * 2 * 8 * 128 * 2);
    expect(devicesNeeded(bf16, 8 * GiB, presetContext(bf16))).toBe(3);
    expect(devicesNeeded(MODEL_PRESETS.find((p) => p.id === 'mlc-ai/Qwen3-1.7B-q4f16_1-MLC')!, 4 * GiB, 8192)).toBe(1);
  });
});
