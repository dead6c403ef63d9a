// The start screen's "fits one device / needs N devices" line (model-picker.ts, devicesNeeded) against the
// room's own planner (src/room/plan.ts planRoom, what `npm run plan` prints) on the real headers of the two
// room presets (sparse Q4_K_M GGUFs at full size: test/helpers/full-size-models.ts): the fewest devices
// of an offer that deal the model at its default context, exactly (no smaller context).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import { devicesNeeded, MODEL_PRESETS, presetContext } from '../../../src/app/models.ts';
import { dealModelOf, planRoom } from '../../../src/room/plan.ts';
import { writeFullSizeGguf } from '../../helpers/full-size-models.ts';

const GiB = 2 ** 30;
type Model = Awaited<ReturnType<typeof dealModelOf>>;
const PRESETS = { '30b-a3b': 'Qwen/Qwen3-30B-A3B-GGUF:Q4_K_M', '35b-a3b': 'ggml-org/Qwen3.6-35B-A3B-GGUF:Q4_K_M' } as const;

let dir: string;
const models: Partial<Record<keyof typeof PRESETS, Model>> = {};
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pooled-fit-'));
  for (const which of Object.keys(PRESETS) as (keyof typeof PRESETS)[]) {
    const f = await writeFullSizeGguf(dir, which);
    models[which] = await dealModelOf(await resolveModelSource(f.path));
  }
}, 240_000);   // two headers with 152k / 248k-token vocabularies written and parsed: ≈30 s on a busy 2-core box
afterAll(async () => { if (dir) await rm(dir, { recursive: true, force: true }); });

/** planRoom's answer: the fewest devices offering `budget` each that hold the model at `ctx` exactly. */
function plannedDevices(model: Model, budget: number, ctx: number): number {
  for (let n = 1; n <= 32; n++) if (planRoom(model, Array(n).fill(budget), { want: ctx, exact: true }).fits) return n;
  return Infinity;
}

describe('start screen fit line = the planner', () => {
  for (const [which, id] of Object.entries(PRESETS) as [keyof typeof PRESETS, string][]) {
    for (const gib of [4, 6, 8]) {
      test(`${id} at its default context on devices of ${gib} GiB`, () => {
        const preset = MODEL_PRESETS.find((p) => p.id === id)!;
        const ctx = presetContext(preset);
        expect(ctx).toBe(32_768);
        const planned = plannedDevices(models[which]!, gib * GiB, ctx);
        expect(devicesNeeded(preset, gib * GiB, ctx)).toBe(planned);
      });
    }
  }
});
