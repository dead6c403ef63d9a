// Qwen3.5 / Qwen3.6 config.json → ModelConfig: released multimodal configs (text_config nested), a
// text-only one, layer_types from full_attention_interval, and named refusals.
import { describe, expect, it } from 'vitest';
import { parseHfConfig } from '../../../../src/model/config.ts';
import { ConfigError } from '../../../../src/model/errors.ts';
import { holdsLinearLayers, isLinearLayer } from '../../../../src/model/types.ts';

/** Qwen3.6-35B-A3B's text_config as released (the fields we read). */
const QWEN36_35B = {
  architectures: ['Qwen3_5MoeForConditionalGeneration'], model_type: 'qwen3_5_moe', tie_word_embeddings: false,
  text_config: {
    model_type: 'qwen3_5_moe_text', attention_bias: false, attn_output_gate: true, bos_token_id: 248044, eos_token_id: 248044,
    full_attention_interval: 4, head_dim: 256, hidden_act: 'silu', hidden_size: 2048,
    layer_types: Array.from({ length: 40 }, (_, i) => ((i + 1) % 4 === 0 ? 'full_attention' : 'linear_attention')),
    linear_conv_kernel_dim: 4, linear_key_head_dim: 128, linear_num_key_heads: 16, linear_num_value_heads: 32, linear_value_head_dim: 128,
    mamba_ssm_dtype: 'float32', max_position_embeddings: 262144, moe_intermediate_size: 512, mtp_num_hidden_layers: 1,
    num_attention_heads: 16, num_experts: 256, num_experts_per_tok: 8, num_hidden_layers: 40, num_key_value_heads: 2,
    rms_norm_eps: 1e-6, shared_expert_intermediate_size: 512, tie_word_embeddings: false, vocab_size: 248320,
    rope_parameters: { mrope_interleaved: true, mrope_section: [11, 11, 10], partial_rotary_factor: 0.25, rope_theta: 10000000, rope_type: 'default' },
  },
  vision_config: { depth: 27 },
};

/** Qwen3.5-4B (dense, tied, no layer_types: derived from the interval). */
const QWEN35_4B = {
  architectures: ['Qwen3_5ForConditionalGeneration'], model_type: 'qwen3_5', tie_word_embeddings: true,
  text_config: {
    hidden_size: 2560, intermediate_size: 9216, num_hidden_layers: 32, num_attention_heads: 16, num_key_value_heads: 4, head_dim: 256,
    attn_output_gate: true, linear_num_key_heads: 16, linear_num_value_heads: 32, linear_key_head_dim: 128, linear_value_head_dim: 128,
    linear_conv_kernel_dim: 4, vocab_size: 248320, max_position_embeddings: 262144, rms_norm_eps: 1e-6,
    rope_parameters: { rope_theta: 10000000, partial_rotary_factor: 0.25 }, eos_token_id: 248044,
  },
};

describe('Qwen3.5 configs', () => {
  it('reads the 35B-A3B MoE: hybrid layout, shared expert, always-renormalised routing', () => {
    const c = parseHfConfig(QWEN36_35B);
    expect(c).toMatchObject({
      modelType: 'qwen3_5_moe', hiddenSize: 2048, numLayers: 40, numHeads: 16, numKvHeads: 2, headDim: 256, vocabSize: 248320,
      ropeTheta: 10000000, tieWordEmbeddings: false, bosTokenId: 248044, eosTokenIds: [248044],
      moe: { numExperts: 256, numExpertsPerTok: 8, moeIntermediateSize: 512, normTopkProb: true, sharedExpertIntermediateSize: 512, mlpOnlyLayers: [], decoderSparseStep: 1 },
      hybrid: { linearNumKeyHeads: 16, linearNumValueHeads: 32, linearKeyHeadDim: 128, linearValueHeadDim: 128, convKernel: 4, rotaryDim: 64 },
    });
    expect(c.hybrid!.layerTypes.filter((t) => t === 'full_attention')).toHaveLength(10);
    expect([isLinearLayer(c, 2), isLinearLayer(c, 3), holdsLinearLayers(c, [3, 4]), holdsLinearLayers(c, [3, 5])]).toEqual([true, false, false, true]);
  });

  it('derives layer_types from full_attention_interval (4 when absent) and reads a text-only config alike', () => {
    const c = parseHfConfig(QWEN35_4B);
    expect(c.modelType).toBe('qwen3_5');
    expect(c.tieWordEmbeddings).toBe(true);
    expect(c.intermediateSize).toBe(9216);
    expect(c.hybrid!.layerTypes.slice(0, 8)).toEqual(['linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
      'linear_attention', 'linear_attention', 'linear_attention', 'full_attention']);
    const textOnly = parseHfConfig({ ...QWEN35_4B.text_config, model_type: 'qwen3_5_text', full_attention_interval: 2 });
    expect(textOnly.hybrid!.layerTypes.slice(0, 4)).toEqual(['linear_attention', 'full_attention', 'linear_attention', 'full_attention']);
    expect(textOnly.hiddenSize).toBe(2560);
  });

  it.each([
    [{ attention_bias: true }, /"attention_bias": true is not supported/],
    [{ attn_output_gate: false }, /"attn_output_gate": false is not supported/],
    [{ hidden_act: 'gelu' }, /"hidden_act" "gelu" is not supported/],
    [{ rope_parameters: { rope_type: 'yarn', rope_theta: 1e7 } }, /rope type "yarn" is not supported/],
    [{ linear_num_value_heads: 24 }, /linear_num_value_heads 24 is not a multiple of linear_num_key_heads 16/],
    [{ layer_types: ['linear_attention'] }, /"layer_types" must list .* for each of the 32 layers/],
    [{ rope_parameters: { rope_theta: 1e7, partial_rotary_factor: 0.001 } }, /0 rotary dims: must be even/],
    [{ rope_parameters: { partial_rotary_factor: 0.25 } }, /missing "rope_parameters.rope_theta"/],
    [{ num_hidden_layers: undefined }, /missing "text_config.num_hidden_layers"/],
  ])('refuses %j by name', (patch, message) => {
    const bad = { ...QWEN35_4B, text_config: { ...QWEN35_4B.text_config, ...patch } };
    expect(() => parseHfConfig(bad)).toThrow(ConfigError);
    expect(() => parseHfConfig(bad)).toThrow(message);
  });
});
