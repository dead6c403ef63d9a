// How the linear kernels are shaped for an adapter. Each adapter class (CPU rasterizer, integrated,
// discrete, mobile) names a few candidate layouts as starting points; src/gpu/autotune.ts times them on
// the device at start-up (and checks their results) and keeps the fastest, cached per adapter.

export type AdapterClass = 'cpu' | 'integrated' | 'discrete' | 'mobile';

/** The decode matvec's shape (shaders/lib/matvec_rows.wgsl). */
export interface MatvecLayout {
  WG: number;                  // lanes per workgroup (a power of two)
  LANES: number;               // lanes splitting each row (a power of two dividing WG)
  ROWS: number;                // rows per group of LANES lanes (2, 4, 6 or 8: gate|up pairs must fit)
  subgroups: boolean;          // reduce with subgroup operations (needs WG ≤ the smallest subgroup) or workgroup memory
}

/** Weight formats with their own layout choice (the kinds of GpuLinear). */
export type LinearFormat = 'dense' | 'q4';

export interface Tuning {
  adapterClass: AdapterClass;
  matvec: Record<LinearFormat, MatvecLayout>;
}

/** What the tuning needs to know about a device. */
export interface DeviceTraits {
  adapterClass: AdapterClass;
  subgroups: boolean;          // the device was created with the 'subgroups' feature
  subgroupMinSize: number;     // 0 when unknown
  maxInvocations: number;
}

type InfoLike = Partial<GPUAdapterInfo> & { isFallbackAdapter?: boolean; subgroupMinSize?: number };

/**
 * The adapter class from what the adapter says about itself. Only a starting point: the timed tuning
 * decides among the class's candidates.
 */
export function adapterClassOf(info: InfoLike): AdapterClass {
  const text = `${info.vendor ?? ''} ${info.architecture ?? ''} ${info.device ?? ''} ${info.description ?? ''}`.toLowerCase();
  if (info.isFallbackAdapter || /llvmpipe|lavapipe|swiftshader|software|warp/.test(text)) return 'cpu';
  if (/\b(arm|mali|qualcomm|adreno|imagination|powervr|samsung)\b/.test(text)) return 'mobile';
  if (/\b(nvidia|amd|ati)\b/.test(text) && !/\b(integrated|apu|vega [0-9] |radeon graphics)\b/.test(text)) return 'discrete';
  return 'integrated';
}

export function deviceTraits(device: GPUDevice): DeviceTraits {
  const info = ((device as unknown as { adapterInfo?: InfoLike }).adapterInfo ?? {}) as InfoLike;
  return {
    adapterClass: adapterClassOf(info),
    subgroups: device.features.has('subgroups'),
    subgroupMinSize: info.subgroupMinSize ?? 0,
    maxInvocations: device.limits.maxComputeInvocationsPerWorkgroup,
  };
}

/**
 * Candidate matvec layouts for a device, best guess first. CPU rasterizers run a subgroup as one SIMD
 * vector: a workgroup of one subgroup, either all lanes splitting a few rows that share each x load
 * (llama.cpp's choice on llvmpipe) or each lane on its own rows so the lanes' x loads are one broadcast.
 * GPUs: a subgroup (or a workgroup-memory tree) per few rows.
 */
export function matvecCandidates(t: DeviceTraits): MatvecLayout[] {
  const sg = t.subgroups && t.subgroupMinSize >= 4 && t.subgroupMinSize <= 128 ? t.subgroupMinSize : 0;
  const out: MatvecLayout[] = [];
  if (t.adapterClass === 'cpu') {
    const wg = sg || 8;
    for (const ROWS of [8, 4]) out.push({ WG: wg, LANES: wg, ROWS, subgroups: sg > 0 });
    for (const ROWS of [2, 4]) out.push({ WG: wg, LANES: 1, ROWS, subgroups: false });
    if (sg) out.push({ WG: wg, LANES: wg, ROWS: 4, subgroups: false });
  } else {
    if (sg >= 16) for (const ROWS of [2, 4]) out.push({ WG: sg, LANES: sg, ROWS, subgroups: true });
    const shared: [number, number, number][] = t.adapterClass === 'mobile'
      ? [[64, 16, 2], [64, 64, 2], [128, 32, 2]] : [[64, 64, 2], [128, 32, 2], [256, 64, 2]];
    for (const [WG, LANES, ROWS] of shared) out.push({ WG, LANES, ROWS, subgroups: false });
  }
  return dedupe(out).filter((l) => l.WG <= t.maxInvocations);
}

function dedupe(ls: MatvecLayout[]): MatvecLayout[] {
  const seen = new Set<string>();
  return ls.filter((l) => {
    const k = layoutKey(l);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export function layoutKey(l: MatvecLayout): string {
  return `wg${l.WG}l${l.LANES}r${l.ROWS}${l.LANES === 1 ? '' : l.subgroups ? 'sg' : 'sh'}`;
}

/** The untimed choice: the first candidate of the device's class, for every format. */
export function defaultTuning(device: GPUDevice): Tuning {
  const t = deviceTraits(device);
  const first = matvecCandidates(t)[0]!;
  return { adapterClass: t.adapterClass, matvec: { dense: first, q4: first } };
}
