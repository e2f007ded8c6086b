/**
 * Ranks 0..n-1 drawn with probability ∝ 1 / (rank + 1)^s (Zipf), by inverse transform over the
 * cumulative weights (binary search): exact for any s, 8 bytes of memory per rank.
 */
export class ZipfSampler {
  private readonly cumulative: Float64Array;

  constructor(
    readonly n: number,
    readonly s: number,
    private readonly random: () => number = Math.random,
  ) {
    this.cumulative = new Float64Array(n);
    let sum = 0;
    for (let k = 0; k < n; k++) this.cumulative[k] = sum += 1 / Math.pow(k + 1, s);
  }

  next(): number {
    const target = this.random() * this.cumulative[this.n - 1];
    let lo = 0;
    let hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cumulative[mid] < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
