// The one base-URL contract every adapter shares (reference, "Provider base URLs"): a
// configured base URL is an absolute http(s) URL without credentials, query or fragment —
// including bare `?` / `#` delimiters, which are rejected rather than stripped. Endpoints are
// joined from the parsed pathname, so trailing slashes never double or drop a segment.

export type BaseUrlResult = { readonly ok: true; readonly url: string } | { readonly ok: false; readonly message: string };

/** Validates a base URL; on success `url` is its normalized form (no trailing slash). */
export function validateBaseURL(value: unknown): BaseUrlResult {
  if (typeof value !== "string" || value.trim() === "") return { ok: false, message: "a base URL must be a non-empty string" };
  if (value.includes("?") || value.includes("#")) {
    return { ok: false, message: "a base URL must not contain a query or fragment (`?` or `#`)" };
  }
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return { ok: false, message: "a base URL must be an absolute URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return { ok: false, message: "a base URL must use http or https" };
  }
  if (parsed.username !== "" || parsed.password !== "") {
    return { ok: false, message: "a base URL must not contain credentials" };
  }
  const path = parsed.pathname.replace(/\/+$/, "");
  return { ok: true, url: `${parsed.origin}${path}` };
}

/** A route (`chat/completions`) is a relative path: no scheme, query, fragment, `..` or empty segments. */
export function validateRoute(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const route = value.replace(/^\/+/, "");
  if (route === "" || /[?#\\]/.test(route) || /^[a-z][a-z0-9+.-]*:/i.test(route)) return undefined;
  const segments = route.replace(/\/+$/, "").split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) return undefined;
  return segments.join("/");
}

/** `<base>/<route>` for a validated base URL and route. */
export function joinEndpoint(baseURL: string, route: string): string {
  const parsed = new URL(baseURL);
  const path = parsed.pathname.replace(/\/+$/, "");
  return `${parsed.origin}${path}/${route.replace(/^\/+/, "")}`;
}
