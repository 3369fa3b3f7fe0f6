// Streamed text, wrapped by the TUI before Ink sees it. Ink wraps a text wider than its box with
// wrap-ansi on every frame (a grapheme-segmented width per word): for a growing answer at ~30
// frames a second that was the largest part of the renderer's CPU. Rows of printable ASCII are
// wrapped here at word boundaries (long words cut), so Ink measures lines that already fit;
// any other line is cut by length and left to Ink (wide or combining characters).

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** `line` as rows of at most `width` columns. */
export function wrapLine(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  if (!PRINTABLE_ASCII.test(line)) {
    const rows: string[] = [];
    for (let start = 0; start < line.length; start += width) rows.push(line.slice(start, start + width));
    return rows;
  }
  const rows: string[] = [];
  let row = "";
  for (let word of line.split(" ")) {
    const joined = row === "" ? word : `${row} ${word}`;
    if (joined.length <= width) {
      row = joined;
      continue;
    }
    if (row !== "") rows.push(row);
    while (word.length > width) {
      rows.push(word.slice(0, width));
      word = word.slice(width);
    }
    row = word;
  }
  rows.push(row);
  return rows;
}

/**
 * A running Turn's text as the rows a screen of `width` columns shows: the last `maxLines`,
 * after a note of how many earlier rows are cut (all of it prints once the Turn settles).
 */
export function tailRows(text: string, maxLines: number, width: number): string {
  const rows: string[] = [];
  for (const line of text.split("\n")) rows.push(...wrapLine(line, width));
  if (rows.length <= maxLines) return rows.join("\n");
  return `… ${rows.length - maxLines} earlier lines (all of it prints when the Turn settles)\n${rows.slice(-maxLines).join("\n")}`;
}
