// What the CPU (WASM) engine refuses, by name, before it places anything in its memory.
import { EngineError } from '../model/engine-errors.ts';

/** A weight shape or layer kind the WASM kernels cannot run (a K that is not whole blocks, say). */
export class CpuUnsupportedError extends EngineError {
  constructor(message: string) {
    super(message);
    this.name = 'CpuUnsupportedError';
  }
}
