// The dashboard's entry (bundled into the page's one inline script by tools/dashboard-asset.mjs).
// It reads the server name from the page's identity meta tag, lists Sessions with the tab's
// token (or none), asks for a token only when the API answers 401, follows the server stream
// for live status, and routes by the URL's fragment: `#/sessions/<id>` shows that Session's view
// at the top of the page with the grid hidden (router.ts), anything else the grid, so a link,
// back and forward open and close views. It is a client of the v1 API only.
import * as sdk from "../../generated/client/sdk.gen.js";
import type { ZeClientError } from "../client.js";
import { watchServer } from "../watch.js";
import { Connection, isStatus, messageOf, SERVER_NAME } from "./api.js";
import { byId } from "./dom.js";
import { LogPanel } from "./logs.js";
import { parseRoute } from "./router.js";
import { SessionView } from "./session-view.js";
import { SessionsGrid } from "./sessions.js";
import { listenForTheme } from "./theme.js";

/** At most this many latest-Turn reads in flight while the grid fills in. */
const STATUS_READS = 4;

listenForTheme(window);

const banner = byId("banner");
const showBanner = (text: string | undefined): void => {
  banner.hidden = text === undefined;
  banner.textContent = text ?? "";
};

const server = document.querySelector<HTMLMetaElement>('meta[name="ze-harness-server"]')?.content ?? "";
if (!SERVER_NAME.test(server)) {
  showBanner("This page was served without a valid server name, so it cannot tell which server to show.");
} else {
  boot(server);
}

function boot(server: string): void {
  const connection = new Connection(server);
  const main = byId("main");
  const login = byId<HTMLFormElement>("login");
  const tokenInput = byId<HTMLInputElement>("token");
  const loginError = byId("login-error");
  const signOut = byId<HTMLButtonElement>("sign-out");
  const live = byId("live");
  byId("server-name").textContent = server;

  const grid = new SessionsGrid(byId("sessions"));
  const gridSection = byId("sessions-section");
  const view = new SessionView(byId("session-view"), connection);
  const logs = new LogPanel(connection);
  let stream = new AbortController();
  let asking = false;
  /** Where the grid was scrolled when a Session opened, restored when it shows again. */
  let gridScroll = 0;

  view.onTurn = (turn) => grid.setTurn(turn);

  /** Shows what the URL's fragment names: a Session's view (first, at the top) or the grid. */
  const route = (): void => {
    if (main.hidden) return; // signing in: start() routes once the Sessions are listed
    const target = parseRoute(location.hash);
    if (target.view === "sessions") {
      const wasOpen = view.openSessionId !== undefined;
      view.close();
      gridSection.hidden = false;
      if (wasOpen) window.scrollTo(0, gridScroll);
      return;
    }
    if (view.openSessionId === target.sessionId) return;
    if (!gridSection.hidden) gridScroll = window.scrollY;
    gridSection.hidden = true;
    grid.selected = target.sessionId;
    grid.render();
    void view.open(target.sessionId);
    window.scrollTo(0, 0);
  };
  window.addEventListener("hashchange", route);

  const setLive = (state: "live" | "connecting" | "reconnecting" | "offline"): void => {
    live.dataset["state"] = state;
    live.textContent = state;
  };

  const stop = (): void => {
    stream.abort();
    logs.stop();
    view.close();
  };

  const askForToken = (error: ZeClientError): void => {
    if (asking) return;
    asking = true;
    stop();
    setLive("offline");
    main.hidden = true;
    login.hidden = false;
    signOut.hidden = true;
    loginError.textContent = connection.token === undefined ? "" : `The token was not accepted (${error.body.message}).`;
    tokenInput.value = "";
    tokenInput.focus();
  };
  connection.onUnauthorized = askForToken;

  login.addEventListener("submit", (event) => {
    event.preventDefault(); // form-action 'none': the form never navigates
    const token = tokenInput.value.trim();
    if (token === "") {
      loginError.textContent = "Enter the server's token.";
      return;
    }
    connection.setToken(token);
    void start();
  });
  signOut.addEventListener("click", () => {
    connection.setToken(undefined);
    void start();
  });

  /** The latest Turn of each listed Session, a few reads at a time. */
  const readStatuses = async (sessions: readonly { id: string; nextSequence: number }[], signal: AbortSignal): Promise<void> => {
    const queue = sessions.filter((session) => session.nextSequence > 1);
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next && !signal.aborted; next = queue.shift()) {
        const page = await connection
          .call(
            sdk.listSessionTurns({
              client: connection.client.client,
              path: { server, sessionId: next.id },
              query: { afterSequence: String(next.nextSequence - 2), limit: "1" },
            }),
          )
          .catch(() => undefined);
        const latest = page?.turns.at(-1)?.turn;
        if (latest && !signal.aborted) grid.setTurn(latest);
      }
    };
    await Promise.all(Array.from({ length: STATUS_READS }, worker));
  };

  const listSessions = async (): Promise<void> => {
    const { sessions } = await connection.call(sdk.listSessions({ client: connection.client.client, path: { server } }));
    grid.setSessions(sessions);
    await readStatuses(sessions, stream.signal);
  };

  const follow = (signal: AbortSignal): void => {
    setLive("connecting");
    watchServer(connection.client, {
      server,
      signal,
      onEvent: (event) => {
        if (event.type === "server.ready") {
          setLive("live");
          // Anything between the first listing and the stream's start is read again.
          void listSessions().catch(() => undefined);
          return;
        }
        grid.apply(event);
        view.onServerEvent(event);
      },
      onLifecycle: (event) => setLive(event.type === "server.reconnecting" ? "reconnecting" : "live"),
    }).catch((error: unknown) => {
      if (signal.aborted) return;
      setLive("offline");
      if (isStatus(error, 401)) askForToken(error as ZeClientError);
      else showBanner(`Live updates stopped: ${messageOf(error)}`);
    });
  };

  async function start(): Promise<void> {
    stop();
    stream = new AbortController();
    asking = false;
    showBanner(undefined);
    signOut.hidden = connection.token === undefined;
    try {
      const { sessions } = await connection.call(sdk.listSessions({ client: connection.client.client, path: { server } }));
      if (asking) return;
      login.hidden = true;
      main.hidden = false;
      grid.setSessions(sessions);
      route();
      follow(stream.signal);
      logs.start();
      void readStatuses(sessions, stream.signal);
    } catch (error) {
      if (isStatus(error, 401)) return; // the token form is showing
      showBanner(`Cannot list Sessions: ${messageOf(error)}`);
    }
  }

  void start();
}
