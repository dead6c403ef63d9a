// The prefill step the deal gives a device (README, "The prefill step"): the tokens its engine runs a
// step, which sizes its activations and its largest read-back, so the deal counts that device's scratch at
// it (host-deal.ts) and `assign` tells the device (its engine takes at most that many: createWebGPUEngine's
// maxStep). The device reports its engine's step in its hello (caps.step: the WebGPU row's adapter class
// step, 512 on a discrete GPU; the wire refuses more than MAX_ENGINE_STEP); a device that reports none
// (the WASM engine keeps its own step) is counted at its row's default.
//
// Tight memory: a bigger step only speeds up prefill (a 512-token step fills a big GPU's cores; decode is
// one token whatever the step), while a layer it crowds out moves to a slower device or shortens the
// context for every token. So a device's step is halved (not below ENGINE_MAX_BATCH, what every engine
// ran before) while what it adds over the default step's scratch is more than STEP_BUDGET_SHARE of the
// device's offer. Qwen3-8B at 512 adds ~70 MB over 64 (about half a Q4_K_M layer): within a 6 GiB
// offer's 384 MiB; a 768 MiB offer (48 MiB) runs 256, which adds ~30 MB.
import type { EngineTable } from '../engines/contract.ts';
import type { ModelConfig } from '../model/types.ts';
import { ENGINE_MAX_BATCH, MAX_ENGINE_STEP, type ScratchOptions } from './device-bytes.ts';
import type { DeviceCaps } from './protocol.ts';

/** The most of a device's offer its step may add over the default step's scratch. */
export const STEP_BUDGET_SHARE = 1 / 16;

/**
 * The step the deal gives a device of these caps offering `budgetBytes` for a share of `config` (scratch:
 * what the scratch is sized for besides the step), or undefined when its engine keeps its own.
 */
export function dealtStep(config: ModelConfig, scratch: ScratchOptions, engines: EngineTable, caps: Pick<DeviceCaps, 'engine' | 'step'>, budgetBytes: number): number | undefined {
  const row = engines[caps.engine];
  const claimed = caps.step;
  if (!row || claimed === undefined) return undefined;
  let step = Math.min(MAX_ENGINE_STEP, Math.max(1, Math.floor(claimed)));
  if (step <= ENGINE_MAX_BATCH) return step;
  const base = row.scratchBytes(config, { ...scratch, maxBatch: ENGINE_MAX_BATCH });
  const allowed = Math.max(0, budgetBytes) * STEP_BUDGET_SHARE;
  while (step > ENGINE_MAX_BATCH && row.scratchBytes(config, { ...scratch, maxBatch: step }) - base > allowed) {
    step = Math.max(ENGINE_MAX_BATCH, Math.floor(step / 2));
  }
  return step;
}
