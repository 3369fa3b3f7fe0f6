// The page's routes live in the URL's fragment, so they work under any path prefix and never
// reach the server: `#/sessions/<id>` is a Session's view, anything else (`#/`, none) is the
// Sessions grid. A card is a link to its Session, so back/forward, a new tab and a pasted link
// all go through `hashchange` (main.ts) like a click does.

export type Route = { readonly view: "sessions" } | { readonly view: "session"; readonly sessionId: string };

const SESSION = /^#\/sessions\/([^/?#]+)\/?$/;

export function parseRoute(hash: string): Route {
  const match = SESSION.exec(hash);
  if (!match) return { view: "sessions" };
  try {
    return { view: "session", sessionId: decodeURIComponent(match[1]!) };
  } catch {
    return { view: "sessions" }; // a malformed escape
  }
}

export const sessionHref = (sessionId: string): string => `#/sessions/${encodeURIComponent(sessionId)}`;

export const SESSIONS_HREF = "#/";
