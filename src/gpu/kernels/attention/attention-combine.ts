// attention_combine (shaders/attention_combine.wgsl): merge a decode step's attention key splits.
import source from '../../../../shaders/attention_combine.wgsl?raw';
import { defineKernel, read, rw, STEP } from '../../kernel.ts';

export const ATTENTION_COMBINE = defineKernel({
  name: 'attention_combine',
  source,
  bindings: {
    step: STEP,                      // one token at pos0
    part: read('array<f32>'),        // [HQ, SPLITS, D + 2]: acc, max, sum per split
    out: rw('array<f32>'),           // [HQ·D]
  },
});
