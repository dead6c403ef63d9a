// Every bad-file case named in issue 2: the exact error class, and a message naming file and tensor.
// Each test copies a fresh tiny checkpoint, breaks one thing, and loads it.

import { cp, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ChecksumError, HeaderError, ModelFileError, ShapeMismatchError, ShardSizeError, TensorMissingError, TensorOffsetError,
  TruncatedFileError, UnsupportedArchitectureError, UnsupportedDTypeError, ConfigError,
} from '../../../../src/model/errors.ts';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { NodeFolderSource } from '../../../../src/model/sources/node-folder.ts';
import { writeTinyModelInto } from '../../../../src/model/tiny/write-node.ts';
import type { WeightRequest } from '../../../../src/model/types.ts';
import { mixerOf } from '../../../helpers/layer-parts.ts';

const OPTS = { layers: 2, vocab: 256, seed: 3 };
const ALL: WeightRequest = { layers: [0, 2], embedding: true, head: true };
let root: string;
let n = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'pooled-bad-'));
  await writeTinyModelInto(join(root, 'pristine-st'), OPTS, 'safetensors');
  await writeTinyModelInto(join(root, 'pristine-st2'), { ...OPTS, shards: 2 }, 'safetensors');
  await writeTinyModelInto(join(root, 'pristine-mlc'), { ...OPTS, shards: 3 }, 'mlc');
});
afterAll(() => rm(root, { recursive: true, force: true }));

async function copyOf(kind: 'st' | 'st2' | 'mlc'): Promise<string> {
  const dir = join(root, `case-${n++}`);
  await cp(join(root, `pristine-${kind}`), dir, { recursive: true });
  return dir;
}

async function loadError(dir: string, req: WeightRequest = ALL): Promise<ModelFileError> {
  try {
    await loadWeights(new NodeFolderSource(dir), req);
  } catch (e) {
    expect(e).toBeInstanceOf(ModelFileError);
    return e as ModelFileError;
  }
  throw new Error('expected the load to fail');
}

/** Rewrite a safetensors header (JSON object) keeping the data section as it is. */
async function editHeader(file: string, edit: (h: Record<string, any>) => void): Promise<void> {
  const bytes = new Uint8Array(await readFile(file));
  const len = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + len)));
  edit(header);
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + bytes.length - 8 - len);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(bytes.subarray(8 + len), 8 + json.length);
  await writeFile(file, out);
}

async function headerInfo(file: string): Promise<{ dataStart: number; header: Record<string, any> }> {
  const bytes = new Uint8Array(await readFile(file));
  const len = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { dataStart: 8 + len, header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + len))) };
}

describe('safetensors bad files', () => {
  it('truncated file: TruncatedFileError naming the file and the tensor that is cut', async () => {
    const dir = await copyOf('st');
    const file = join(dir, 'model.safetensors');
    const { dataStart, header } = await headerInfo(file);
    const [b, e] = header['model.layers.1.mlp.up_proj.weight'].data_offsets as [number, number];
    await truncate(file, dataStart + Math.floor((b + e) / 2));
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(TruncatedFileError);
    expect(err.file).toBe('model.safetensors');
    expect(err.tensor).toBe('model.layers.1.mlp.up_proj.weight');
    expect(err.message).toMatch(/^model\.safetensors, tensor "model\.layers\.1\.mlp\.up_proj\.weight": the file ends inside this tensor's bytes/);
  });

  it('file shorter than the 8-byte length prefix: TruncatedFileError', async () => {
    const dir = await copyOf('st');
    await truncate(join(dir, 'model.safetensors'), 5);
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(TruncatedFileError);
    expect(err.message).toMatch(/^model\.safetensors: shorter than the 8-byte header length/);
  });

  it('header length past the end of the file: HeaderError', async () => {
    const dir = await copyOf('st');
    const file = join(dir, 'model.safetensors');
    const bytes = new Uint8Array(await readFile(file));
    new DataView(bytes.buffer, bytes.byteOffset).setBigUint64(0, BigInt(bytes.length + 1000), true);
    await writeFile(file, bytes);
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(HeaderError);
    expect(err.message).toMatch(new RegExp(`^model\\.safetensors: header length ${bytes.length + 1000} runs past the end of the file`));
  });

  it('absurd header length (over 100 MB): HeaderError', async () => {
    const dir = await copyOf('st');
    const file = join(dir, 'model.safetensors');
    const bytes = new Uint8Array(await readFile(file));
    new DataView(bytes.buffer, bytes.byteOffset).setBigUint64(0, 2n ** 40n, true);
    await writeFile(file, bytes);
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(HeaderError);
    expect(err.message).toMatch(/^model\.safetensors: header length 1099511627776 is not plausible/);
  });

  it('header JSON that does not parse: HeaderError', async () => {
    const dir = await copyOf('st');
    const file = join(dir, 'model.safetensors');
    const bytes = new Uint8Array(await readFile(file));
    bytes[8] = '['.charCodeAt(0);
    bytes[9] = '{'.charCodeAt(0);
    await writeFile(file, bytes);
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(HeaderError);
    expect(err.message).toMatch(/^model\.safetensors: safetensors header is not valid JSON/);
  });

  it('offsets outside the data: TensorOffsetError naming the tensor', async () => {
    const dir = await copyOf('st');
    const file = join(dir, 'model.safetensors');
    await editHeader(file, (h) => {
      const t = h['model.norm.weight'];
      const size = t.data_offsets[1] - t.data_offsets[0];
      t.data_offsets = [10_000_000, 10_000_000 + size];
    });
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(TensorOffsetError);
    expect(err.tensor).toBe('model.norm.weight');
    expect(err.message).toMatch(/^model\.safetensors, tensor "model\.norm\.weight": data_offsets \[10000000, 10000128\] leave a gap \(or point outside the data\)/);
  });

  it('offsets that disagree with dtype × shape: TensorOffsetError', async () => {
    const dir = await copyOf('st');
    await editHeader(join(dir, 'model.safetensors'), (h) => { h['model.layers.0.self_attn.q_norm.weight'].shape = [17]; });
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(TensorOffsetError);
    expect(err.message).toMatch(/tensor "model\.layers\.0\.self_attn\.q_norm\.weight": byte range \[\d+, \d+\) holds 32 bytes but BF16 \[17\] needs 34/);
  });

  it('shape that disagrees with config.json: ShapeMismatchError', async () => {
    const dir = await copyOf('st');
    const cfgFile = join(dir, 'config.json');
    const cfg = JSON.parse(await readFile(cfgFile, 'utf8'));
    cfg.intermediate_size = 96;
    await writeFile(cfgFile, JSON.stringify(cfg));
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(ShapeMismatchError);
    expect(err.file).toBe('model.safetensors');
    expect(err.message).toMatch(/^model\.safetensors, tensor "model\.layers\.0\.mlp\.(gate|up|down)_proj\.weight": shape \[(128, 64|64, 128)\] but config\.json implies \[(96, 64|64, 96)\]/);
  });

  it('missing tensor: TensorMissingError naming the file', async () => {
    const dir = await copyOf('st');
    await editHeader(join(dir, 'model.safetensors'), (h) => {
      h['model.layers.1.mlp.up_projX.weight'] = h['model.layers.1.mlp.up_proj.weight'];
      delete h['model.layers.1.mlp.up_proj.weight'];
    });
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(TensorMissingError);
    expect(err.message).toBe('model.safetensors, tensor "model.layers.1.mlp.up_proj.weight": tensor not in the file');
    // asking only for layer 0 does not need it, and succeeds
    await expect(loadWeights(new NodeFolderSource(dir), { layers: [0, 1] })).resolves.toBeTruthy();
  });

  it('unsupported dtype: UnsupportedDTypeError', async () => {
    const dir = await copyOf('st');
    await editHeader(join(dir, 'model.safetensors'), (h) => { h['model.norm.weight'].dtype = 'I16'; });
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(UnsupportedDTypeError);
    expect(err.message).toMatch(/tensor "model\.norm\.weight": dtype I16 is not supported/);
  });

  it('sharded: a tensor missing from weight_map, and an index that does not parse', async () => {
    const dir = await copyOf('st2');
    const indexFile = join(dir, 'model.safetensors.index.json');
    const index = JSON.parse(await readFile(indexFile, 'utf8'));
    delete index.weight_map['model.layers.0.self_attn.k_proj.weight'];
    await writeFile(indexFile, JSON.stringify(index));
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(TensorMissingError);
    expect(err.message).toBe('model.safetensors.index.json, tensor "model.layers.0.self_attn.k_proj.weight": tensor not listed in weight_map');
    await writeFile(indexFile, '{"weight_map": {');
    const err2 = await loadError(dir);
    expect(err2).toBeInstanceOf(HeaderError);
    expect(err2.message).toMatch(/^model\.safetensors\.index\.json: index is not valid JSON/);
  });

  it('sharded: a truncated shard names that shard', async () => {
    const dir = await copyOf('st2');
    await truncate(join(dir, 'model-00002-of-00002.safetensors'), 4000);
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(TruncatedFileError);
    expect(err.file).toBe('model-00002-of-00002.safetensors');
    expect(err.tensor).toBeDefined();
  });
});

describe('MLC bad files', () => {
  it('shard whose size does not match its record: ShardSizeError', async () => {
    const dir = await copyOf('mlc');
    const cache = JSON.parse(await readFile(join(dir, 'tensor-cache.json'), 'utf8'));
    const shard = cache.records[1];
    await truncate(join(dir, shard.dataPath), shard.nbytes - 10);
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(ShardSizeError);
    expect(err.message).toBe(`${shard.dataPath}: is ${shard.nbytes - 10} bytes but tensor-cache.json records ${shard.nbytes}`);
  });

  it('shard whose md5 does not match its record: ChecksumError', async () => {
    const dir = await copyOf('mlc');
    const cache = JSON.parse(await readFile(join(dir, 'tensor-cache.json'), 'utf8'));
    const shard = cache.records[2];
    const file = join(dir, shard.dataPath);
    const bytes = new Uint8Array(await readFile(file));
    bytes[100] ^= 0x01;
    await writeFile(file, bytes);
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(ChecksumError);
    expect(err.message).toMatch(new RegExp(`^${shard.dataPath.replace('.', '\\.')}: md5 [0-9a-f]{32} but tensor-cache\\.json records ${shard.md5sum}$`));
  });

  it('record outside its shard: TensorOffsetError; cache that does not parse: HeaderError', async () => {
    const dir = await copyOf('mlc');
    const cacheFile = join(dir, 'tensor-cache.json');
    const cache = JSON.parse(await readFile(cacheFile, 'utf8'));
    const rec = cache.records[1].records[0];
    rec.byteOffset = cache.records[1].nbytes;
    await writeFile(cacheFile, JSON.stringify(cache));
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(TensorOffsetError);
    expect(err.message).toMatch(new RegExp(`^tensor-cache\\.json, tensor "${rec.name}": bytes \\[\\d+, \\d+\\) lie outside shard params_shard_1\\.bin`));
    await writeFile(cacheFile, '{"records": [');
    const err2 = await loadError(dir);
    expect(err2).toBeInstanceOf(HeaderError);
    expect(err2.message).toMatch(/^tensor-cache\.json: not valid JSON/);
  });

  it('missing tensor and wrong shape against mlc-chat-config.json', async () => {
    const dir = await copyOf('mlc');
    const cacheFile = join(dir, 'tensor-cache.json');
    const original = await readFile(cacheFile, 'utf8');
    await writeFile(cacheFile, original.replace('"model.layers.1.mlp.down_proj.q_scale"', '"model.layers.1.mlp.down_proj.scale"'));
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(TensorMissingError);
    expect(err.message).toBe('tensor-cache.json, tensor "model.layers.1.mlp.down_proj.q_scale": tensor not in any shard record');
    await writeFile(cacheFile, original);
    const cfgFile = join(dir, 'mlc-chat-config.json');
    const cfg = JSON.parse(await readFile(cfgFile, 'utf8'));
    cfg.model_config.num_key_value_heads = 4;
    await writeFile(cfgFile, JSON.stringify(cfg));
    const err2 = await loadError(dir);
    expect(err2).toBeInstanceOf(ShapeMismatchError);
    expect(err2.message).toMatch(/tensor "model\.layers\.0\.self_attn\.c_attn\.q_weight": shape \[128, 8\] but mlc-chat-config\.json implies \[192, 8\]/);
  });

  it('the older ndarray-cache.json name is read too', async () => {
    const dir = await copyOf('mlc');
    await writeFile(join(dir, 'ndarray-cache.json'), await readFile(join(dir, 'tensor-cache.json')));
    await rm(join(dir, 'tensor-cache.json'));
    const w = await loadWeights(new NodeFolderSource(dir), { layers: [0, 1] });
    expect(mixerOf(w.layers.get(0), 'attention').qkv.kind).toBe('q4f16_1');
    await rm(join(dir, 'ndarray-cache.json'));
    const err = await loadError(dir);
    expect(err.name).toBe('UnknownFormatError');
    expect(err.message).toMatch(/no weights found: expected model\.safetensors, model\.safetensors\.index\.json, tensor-cache\.json, ndarray-cache\.json or a \.gguf file/);
  });
});

describe('configs that are not Qwen3 or Qwen3 MoE', () => {
  it.each([
    ['llama', 'LlamaForCausalLM'], ['qwen2_moe', 'Qwen2MoeForCausalLM'], ['qwen2', 'Qwen2ForCausalLM'],
  ])('config.json with model_type %s: UnsupportedArchitectureError naming it', async (modelType, arch) => {
    const dir = await copyOf('st');
    const cfgFile = join(dir, 'config.json');
    const cfg = JSON.parse(await readFile(cfgFile, 'utf8'));
    cfg.model_type = modelType;
    cfg.architectures = [arch];
    await writeFile(cfgFile, JSON.stringify(cfg));
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(UnsupportedArchitectureError);
    expect((err as UnsupportedArchitectureError).architecture).toBe(modelType);
    expect(err.message).toBe(`config.json: unsupported architecture "${modelType}": pooled runs Qwen3 dense and Qwen3 MoE models (model_type "qwen3" / "qwen3_moe", GGUF "qwen3" / "qwen3moe")`);
  });

  it('mlc-chat-config.json of another model: UnsupportedArchitectureError', async () => {
    const dir = await copyOf('mlc');
    const cfgFile = join(dir, 'mlc-chat-config.json');
    const cfg = JSON.parse(await readFile(cfgFile, 'utf8'));
    cfg.model_type = 'gemma3';
    await writeFile(cfgFile, JSON.stringify(cfg));
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(UnsupportedArchitectureError);
    expect(err.message).toMatch(/^mlc-chat-config\.json: unsupported architecture "gemma3"/);
  });

  it('config.json that does not parse, or lacks a field: ConfigError', async () => {
    const dir = await copyOf('st');
    const cfgFile = join(dir, 'config.json');
    const cfg = JSON.parse(await readFile(cfgFile, 'utf8'));
    delete cfg.hidden_size;
    await writeFile(cfgFile, JSON.stringify(cfg));
    const err = await loadError(dir);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe('config.json: missing "hidden_size"');
    await writeFile(cfgFile, '{"model_type": "qwen3",');
    const err2 = await loadError(dir);
    expect(err2).toBeInstanceOf(ConfigError);
    expect(err2.message).toMatch(/^config\.json: not valid JSON/);
  });
});
