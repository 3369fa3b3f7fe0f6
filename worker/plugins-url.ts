// Which URLs a `Bundle` plugin source may name (worker/plugins-sources.ts): a credential-free
// `https://` URL; with the test and development knob `HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP` also an
// `http://` URL of a loopback host (`127.0.0.0/8`, `localhost`, `[::1]`) — the whole host name,
// never a name that merely starts like one. Apart from the sources so it is testable under Node
// (the sources import workerd's `cloudflare:workers` through the loader).
import { validationFailure } from "../services/contract/failure.js";

export const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** The URL a bundle may be fetched from, or why not (400). */
export function checkBundleUrl(text: string, allowLoopbackHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw validationFailure("A Bundle plugin source must be an https:// URL; the one given is not a URL.");
  }
  if (url.username !== "" || url.password !== "") throw validationFailure("A Bundle plugin source URL must be credential-free (no user or password in it).");
  const loopbackHttp = allowLoopbackHttp && url.protocol === "http:" && LOOPBACK_HOSTS.test(url.hostname);
  if (url.protocol !== "https:" && !loopbackHttp) throw validationFailure("A Bundle plugin source must be an https:// URL.");
  return url;
}

