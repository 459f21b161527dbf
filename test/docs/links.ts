/** Links and heading anchors of a Markdown file, as GitHub and npm render them (fenced code excluded). */

/** Inline links `[text](target)` outside fenced code and code spans, with their 1-based line. */
export function markdownLinks(markdown: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split(/\r?\n/).forEach((text, i) => {
    const f = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (f !== undefined && (fence === undefined || f.startsWith(fence))) {
      fence = fence === undefined ? f : undefined;
      return;
    }
    if (fence !== undefined) return;
    const prose = text.replaceAll(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1]!, line: i + 1 });
  });
  return out;
}

/** The anchors of the headings (github-slugger: lower case, punctuation dropped, spaces to `-`, `-N` for repeats). */
export function slugs(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s*(`{3,}|~{3,})/.test(line)) fence = !fence;
    const heading = fence ? undefined : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = heading.toLowerCase().replaceAll(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replaceAll(' ', '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}
