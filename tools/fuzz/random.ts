// Seeded randomness for the contract fuzzer. Every request draws from its own generator, derived
// from the run's seed and the request's index, so request N is the same request whatever came
// before it (the harvested resource ids it picks by position aside).

/** sfc32: small, fast, and good enough to spread test inputs; never used for secrets. */
export class Random {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: string) {
    // Four 32-bit words of the seed's FNV-1a hashes, then a few rounds to mix them.
    const words = [0x811c9dc5, 0x01000193, 0xdeadbeef, 0x12345678].map((basis) => {
      let hash = basis >>> 0;
      for (let index = 0; index < seed.length; index++) hash = Math.imul(hash ^ seed.charCodeAt(index), 0x01000193) >>> 0;
      return hash;
    });
    [this.#a, this.#b, this.#c, this.#d] = words as [number, number, number, number];
    for (let round = 0; round < 12; round++) this.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.#a + this.#b) >>> 0) + this.#d) >>> 0;
    this.#d = (this.#d + 1) >>> 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) >>> 0;
    this.#c = ((this.#c << 21) | (this.#c >>> 11)) >>> 0;
    this.#c = (this.#c + t) >>> 0;
    return t / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(values: readonly T[]): T {
    if (values.length === 0) throw new Error("pick from an empty list");
    return values[Math.floor(this.next() * values.length)]!;
  }

  /** One of `weighted`'s values, each as likely as its weight. */
  weighted<T>(weighted: readonly (readonly [number, T])[]): T {
    const total = weighted.reduce((sum, [weight]) => sum + weight, 0);
    let roll = this.next() * total;
    for (const [weight, value] of weighted) {
      roll -= weight;
      if (roll < 0) return value;
    }
    return weighted.at(-1)![1];
  }

  /** A version-4-shaped UUID from this generator (reproducible, unlike crypto.randomUUID). */
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => this.int(0, 15).toString(16));
    hex[12] = "4";
    hex[16] = "89ab"[this.int(0, 3)]!;
    const text = hex.join("");
    return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
  }

  /** The generator of request `index` of a run with `seed`. */
  static forRequest(seed: string, index: number): Random {
    return new Random(`${seed}#${index}`);
  }
}
