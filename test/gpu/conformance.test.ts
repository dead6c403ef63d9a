// The engine conformance suite (test/helpers/engine-conformance.ts) for the WebGPU row, on Dawn (lavapipe
// in CI); the reference row is the oracle where a case has no golden file. The Node rows run it in the
// unit project (test/unit/engines/conformance.test.ts).
import { ENGINES } from '../../src/engines/table.ts';
import { engineConformance } from '../helpers/engine-conformance.ts';

const SLOW = 300_000;   // lavapipe runs every kernel on the CPU, and a fresh clone writes the tiny models first
engineConformance([ENGINES.webgpu!], ENGINES.reference!, SLOW);
