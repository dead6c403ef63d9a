// How a device of the room loads its share: one path for every engine. An engine row's loadShare (the
// app hands the room its engines: src/engines), or, where a caller gives the two steps instead (tests,
// the harness), its loadWeights + createEngine on this thread.
import type { EngineFactory, LoadWeightsFn, ShareLoadFn } from '../engines/contract.ts';
import { inThreadShare } from '../engines/in-thread-share.ts';

export type { EngineFactory, LoadedShare, LoadWeightsFn, ShareLoadFn, ShareRequest } from '../engines/contract.ts';

export interface ShareLoading {
  /** Loads a share and makes its engine (an engine row's loadShare). */
  loadShare?: ShareLoadFn;
  /** Or the two steps on this thread: read the share's weights, then make the engine of them. */
  loadWeights?: LoadWeightsFn;
  createEngine?: EngineFactory;
}

/** The one loader a device uses (read at each load: a test may swap a step between deals). */
export function shareLoaderOf(o: ShareLoading): ShareLoadFn {
  if (o.loadShare) return o.loadShare;
  if (!o.loadWeights || !o.createEngine) throw new Error('a device needs loadShare, or loadWeights and createEngine');
  return inThreadShare(o.loadWeights, o.createEngine);
}
