// Errors of the WebGPU engine beyond the shared engine errors (src/model/engine-errors.ts, which
// this engine throws too). `code` survives the worker boundary.
import { EngineError } from '../model/engine-errors.ts';

/** A tensor or cache that cannot be laid out within the device's limits, or a failed GPU allocation. */
export class GpuResourceError extends EngineError {
  override name = 'GpuResourceError';
  override readonly code: string = 'gpu-resource';
}

/** A weight this engine cannot run (dtype, shape), named by tensor. */
export class UnsupportedWeightError extends EngineError {
  override name = 'UnsupportedWeightError';
  override readonly code: string = 'unsupported-weight';
}
