import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseHfConfig, parseJsonFile, parseMlcChatConfig } from '../../../../src/model/config.ts';
import { ConfigError, TensorOffsetError, UnsupportedArchitectureError } from '../../../../src/model/errors.ts';
import { Md5, md5Hex } from '../../../../src/model/formats/md5.ts';
import { encodeSafetensors, parseSafetensorsHeader } from '../../../../src/model/formats/safetensors.ts';
import { fromFloat32, toFloat32 } from '../../../../src/model/tensor-utils.ts';

const qwen17 = JSON.parse(readFileSync(new URL('../../../fixtures/qwen3-1.7b.config.json', import.meta.url), 'utf8'));

describe('config', () => {
  it('reads the real Qwen3-1.7B config.json', () => {
    expect(parseHfConfig(qwen17)).toEqual({
      modelType: 'qwen3', hiddenSize: 2048, numLayers: 28, numHeads: 16, numKvHeads: 8, headDim: 128,
      intermediateSize: 6144, vocabSize: 151936, ropeTheta: 1e6, rmsNormEps: 1e-6, tieWordEmbeddings: true,
      maxPositionEmbeddings: 40960, bosTokenId: 151643, eosTokenIds: [151645],
    });
  });

  it('reads an mlc-chat-config.json model_config (head_dim 0 means hidden / heads)', () => {
    const cfg = parseMlcChatConfig({
      model_type: 'qwen3', quantization: 'q4f16_1', bos_token_id: 151643, eos_token_id: [151645, 151643],
      model_config: {
        hidden_size: 2048, intermediate_size: 6144, num_attention_heads: 16, num_hidden_layers: 28, num_key_value_heads: 8,
        rms_norm_eps: 1e-6, rope_theta: 1000000, vocab_size: 151936, tie_word_embeddings: true, context_window_size: 40960, head_dim: 0,
      },
    });
    expect(cfg).toMatchObject({ headDim: 128, numLayers: 28, eosTokenIds: [151645, 151643], maxPositionEmbeddings: 40960 });
  });

  it('refuses options the forward pass does not implement, naming them', () => {
    expect(() => parseHfConfig({ ...qwen17, rope_scaling: { type: 'yarn', factor: 4 } })).toThrow(/"rope_scaling" \{"type":"yarn","factor":4\} is not supported/);
    expect(() => parseHfConfig({ ...qwen17, attention_bias: true })).toThrow(ConfigError);
    expect(() => parseHfConfig({ ...qwen17, num_key_value_heads: 5 })).toThrow(/num_attention_heads 16 is not a multiple of num_key_value_heads 5/);
    expect(() => parseHfConfig({ ...qwen17, hidden_size: -1 })).toThrow(/"hidden_size" must be a positive integer, got -1/);
    expect(() => parseHfConfig({ architectures: ['MistralForCausalLM'] })).toThrow(UnsupportedArchitectureError);
    expect(() => parseHfConfig({ architectures: ['MistralForCausalLM'] })).toThrow(/unsupported architecture "MistralForCausalLM"/);
    expect(() => parseJsonFile('[1]', 'config.json')).toThrow(/^config\.json: expected a JSON object/);
  });
});

describe('md5', () => {
  it('matches RFC 1321 vectors and node:crypto, in one piece or many', () => {
    expect(md5Hex(new Uint8Array())).toBe('d41d8cd98f00b204e9800998ecf8427e');
    expect(md5Hex(new TextEncoder().encode('abc'))).toBe('900150983cd24fb0d6963f7d28e17f72');
    expect(md5Hex(new TextEncoder().encode('12345678901234567890123456789012345678901234567890123456789012345678901234567890')))
      .toBe('57edf4a22be3c955ac49da2e2107b67a');
    for (const n of [55, 56, 63, 64, 65, 1000, 4099]) {
      const data = Uint8Array.from({ length: n }, (_, i) => (i * 131 + 7) & 255);
      const inc = new Md5();
      for (let i = 0; i < n; i += 17) inc.update(data.subarray(i, i + 17));
      const ref = createHash('md5').update(data).digest('hex');
      expect(md5Hex(data)).toBe(ref);
      expect(inc.hex()).toBe(ref);
    }
  });
});

describe('safetensors encode / parse', () => {
  it('round-trips tensors with an 8-byte aligned, space-padded header', () => {
    const a = fromFloat32('a', [1, 2, 3], [3], 'BF16');
    const b = fromFloat32('b.weight', [0.5, -0.25, 4, 8], [2, 2], 'F32');
    const file = encodeSafetensors([a, b]);
    const n = Number(new DataView(file.buffer).getBigUint64(0, true));
    expect(n % 8).toBe(0);
    expect(file[8 + n - 1]).toBeOneOf([0x20, 0x7d]);
    const entries = parseSafetensorsHeader(file.subarray(8, 8 + n), 'x.safetensors', 8 + n);
    expect(entries.map((e) => [e.name, e.dtype, e.shape, e.start - 8 - n, e.end - 8 - n])).toEqual([
      ['a', 'BF16', [3], 0, 6], ['b.weight', 'F32', [2, 2], 6, 22],
    ]);
    const e = entries[1]!;
    expect(Array.from(toFloat32({ name: e.name, dtype: e.dtype, shape: e.shape, bytes: file.subarray(e.start, e.end) }))).toEqual([0.5, -0.25, 4, 8]);
  });

  it('rejects overlapping tensors', () => {
    const header = JSON.stringify({ a: { dtype: 'F16', shape: [2], data_offsets: [0, 4] }, b: { dtype: 'F16', shape: [2], data_offsets: [2, 6] } });
    expect(() => parseSafetensorsHeader(new TextEncoder().encode(header), 'x.safetensors', 100)).toThrow(TensorOffsetError);
    expect(() => parseSafetensorsHeader(new TextEncoder().encode(header), 'x.safetensors', 100))
      .toThrow(/^x\.safetensors, tensor "b": data_offsets \[2, 6\] overlap the previous tensor: the previous tensor ends at 4$/);
  });
});
