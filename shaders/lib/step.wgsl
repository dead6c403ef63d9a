// step: the engine's per-step uniform, bound as `step` by every kernel of a layer (written once per
// submit by src/gpu/engine.ts): this step runs n tokens at positions pos0 .. pos0 + n − 1.
struct Step { n: u32, pos0: u32 }
