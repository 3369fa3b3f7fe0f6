// The `--zh-*` theme tokens (their defaults are the dark theme in page.html's :root) and the
// `ze-harness:theme` message: an embedding parent window may override any listed token with a
// string value; every other message, key or value is ignored. Theme only, never data.

const SIZES = ["10", "10-5", "11", "11-5", "12", "12-5", "13", "14", "15", "16", "17"];
const RADII = ["2", "3", "4", "5", "6", "8", "full"];
const SPACES = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "12", "14", "16", "18", "20", "24", "28", "32", "44", "80"];

/** Every token the page reads, as named by the reference's theme table. */
export const THEME_TOKENS: readonly string[] = [
  "--zh-color-scheme",
  ...["bg", "panel", "inset", "border", "text", "dim", "faint", "accent", "ok", "warn", "bad", "steer"].map((name) => `--zh-${name}`),
  "--zh-font-sans",
  "--zh-font-mono",
  ...SIZES.map((size) => `--zh-text-${size}`),
  "--zh-weight-normal",
  "--zh-weight-medium",
  "--zh-weight-semibold",
  "--zh-leading",
  "--zh-leading-prose",
  "--zh-tracking-label",
  ...RADII.map((radius) => `--zh-radius-${radius}`),
  "--zh-shadow-card",
  "--zh-shadow-focus",
  "--zh-shadow-focus-thin",
  ...SPACES.map((space) => `--zh-space-${space}`),
];

const KNOWN = new Set(THEME_TOKENS);

/** Applies the listed string-valued tokens of a `ze-harness:theme` message; returns how many. */
export function applyTheme(root: HTMLElement, data: unknown): number {
  if (typeof data !== "object" || data === null) return 0;
  const message = data as { type?: unknown; tokens?: unknown };
  if (message.type !== "ze-harness:theme" || typeof message.tokens !== "object" || message.tokens === null) return 0;
  let applied = 0;
  for (const [key, value] of Object.entries(message.tokens as Record<string, unknown>)) {
    if (!KNOWN.has(key) || typeof value !== "string") continue;
    root.style.setProperty(key, value);
    applied += 1;
  }
  return applied;
}

/** Listens for theme messages from the parent window only (a page that is not framed has none). */
export function listenForTheme(window: Window): void {
  window.addEventListener("message", (event) => {
    if (window.parent === window || event.source !== window.parent) return;
    applyTheme(window.document.documentElement, event.data);
  });
}
