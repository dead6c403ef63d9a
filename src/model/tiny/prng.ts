// Seeded random numbers for tiny checkpoints: same seed and tensor name → same values on every machine.

/** FNV-1a over a string, 32 bits. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** sfc32 generator (32-bit state words, passes PractRand far beyond our needs). */
export class Sfc32 {
  private a: number; private b: number; private c: number; private d: number;
  private spare: number | undefined;

  constructor(seed: number, stream = 0) {
    this.a = seed >>> 0; this.b = stream >>> 0; this.c = 0x9e3779b9; this.d = 1;
    for (let i = 0; i < 15; i++) this.nextU32();   // mix the seed in
  }

  nextU32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform in (0, 1). */
  uniform(): number {
    return (this.nextU32() + 0.5) / 4294967296;
  }

  /** Standard normal (Box-Muller; uses both outputs). */
  normal(): number {
    if (this.spare !== undefined) {
      const s = this.spare;
      this.spare = undefined;
      return s;
    }
    const r = Math.sqrt(-2 * Math.log(this.uniform()));
    const theta = 2 * Math.PI * this.uniform();
    this.spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  }
}
