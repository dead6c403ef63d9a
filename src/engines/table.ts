// The engines this app runs, by kind: a new engine is its folder, its row there (the contract:
// ./contract.ts) and one line here. Order matters twice: the probe measures them in this order, and the
// first row presumed here (presumedHere) is the engine assumed before any probe ran.
// src/app hands this table to the room (src/room imports no engine) and reads ?engine= and each row's
// options against it; src/ui names engines from it.
import type { EngineTable } from './contract.ts';
import { webgpuRow } from '../gpu/engine-row.ts';
import { wasmRow } from '../cpu/engine-row.ts';
import { referenceRow } from '../model/reference/engine-row.ts';

export const ENGINES: EngineTable = {
  webgpu: webgpuRow,
  wasm: wasmRow,
  reference: referenceRow,
};
