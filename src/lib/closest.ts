/**
 * "Did you mean": the granted name nearest to a name no role grants (the inventory's drift warning).
 */

/** A granted name equal ignoring case, else the nearest within 2 edits (Damerau–Levenshtein); ties: code-unit order. */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of [...candidates].sort(byCodeUnits)) {
    if (candidate.toLowerCase() === lower) return candidate;
    // Names far longer or shorter cannot be within 2 edits; short names are not guessed at.
    if (Math.abs(candidate.length - name.length) > 2 || Math.min(candidate.length, name.length) < 3) continue;
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Damerau–Levenshtein (optimal string alignment): insertions, deletions, substitutions, adjacent swaps. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((rows[i - 1] as number[])[j] as number + 1, row[j - 1] as number + 1, (rows[i - 1] as number[])[j - 1] as number + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (rows[i - 2] as number[])[j - 2] as number + 1);
      row[j] = d;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
