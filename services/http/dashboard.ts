// GET /dashboard: the built dashboard page (clients/dashboard/, inlined into one HTML document by
// tools/dashboard-asset.mjs) with this host's server name in its identity meta tag, served
// without authentication (the page asks for a token only when the API answers 401) under a
// Content-Security-Policy whose script hash was computed at build time. Framing: only by the page's
// own origin (`frame-ancestors 'self'`; the reference let any parent frame it), so a page of
// another origin cannot frame the live dashboard and steer a click onto an Allow button; other
// embedders only when the server names them (`serve --frame-ancestor ORIGIN`, token required).

/** The built page and the hash of its one inline script (`sha256-<base64>`). */
export interface DashboardAsset {
  readonly html: string;
  /** `sha256-…` of the inline script, or undefined for a page without script. */
  readonly scriptHash: string | undefined;
}

export interface DashboardOptions {
  /** The server name the page addresses (`v1/servers/<server>/…`). */
  readonly server: string;
  /** The built asset, read on first use. */
  readonly asset: () => DashboardAsset;
  /** Origins (scheme://host[:port]) that may frame the page besides its own. */
  readonly frameAncestors?: readonly string[];
}

/** What a checkout that was never built serves: a plain page (no script) saying how to build it. */
export const UNBUILT_DASHBOARD: DashboardAsset = {
  html: '<!doctype html><html lang="en"><meta charset="utf-8"><meta name="ze-harness-server" content="%ZE_HARNESS_SERVER%"><title>Ze Harness</title><p>The dashboard is built by <code>npm run build</code>.</p></html>',
  scriptHash: undefined,
};

/** The identity placeholder the handler fills in (it appears once, in the meta tag). */
export const SERVER_PLACEHOLDER = "%ZE_HARNESS_SERVER%";
const SERVER_META = `<meta name="ze-harness-server" content="${SERVER_PLACEHOLDER}">`;

/** Exactly `GET /dashboard` (HEAD is answered as this GET by the handler). */
export function isDashboardRequest(method: string, url: URL): boolean {
  return method === "GET" && url.pathname === "/dashboard";
}

/** The page's policy: nothing but its own script, inline styles, and same-origin API calls. */
export function dashboardCsp(scriptHash: string | undefined, frameAncestors: readonly string[] = []): string {
  const script = scriptHash === undefined ? "'none'" : `'${scriptHash}'`;
  const ancestors = ["'self'", ...frameAncestors].join(" ");
  return `default-src 'none'; style-src 'unsafe-inline'; script-src ${script}; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${ancestors}`;
}

const escapeAttribute = (value: string): string =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The page for `server`; the identity meta tag is the only part that changes (the script hash holds). */
export function dashboardResponse(options: DashboardOptions): Response {
  const asset = options.asset();
  const html = asset.html.replace(SERVER_META, () => `<meta name="ze-harness-server" content="${escapeAttribute(options.server)}">`);
  return new Response(html, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": dashboardCsp(asset.scriptHash, options.frameAncestors),
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
  });
}
