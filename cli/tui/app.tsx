// The TUI's root: subscribes to the controller (and through it the Session feed), renders the
// opening screen or the conversation, and sends every key to keys.ts.
import { Box, Static, Text, useApp, useInput, useStdout } from "ink";
import { useEffect, useSyncExternalStore } from "react";
import type { Session } from "../../clients/index.js";
import { Attachments } from "./components/attachments.js";
import { Composer } from "./components/composer.js";
import { Header } from "./components/header.js";
import { PermissionPrompt } from "./components/permission.js";
import { ReasoningRow } from "./components/reasoning-row.js";
import { ToolEntry } from "./components/execute-group.js";
import { ExecuteTrace } from "./components/execute-trace.js";
import { Picker } from "./components/picker.js";
import { QuestionPrompt } from "./components/question.js";
import { StatusRow, type StatusRowProps } from "./components/status-row.js";
import { Suggestions } from "./components/suggestions.js";
import { TurnView } from "./components/turn-view.js";
import { SPINNER } from "./format.js";
import type { Controller } from "./state/controller.js";
import { handleKey } from "./state/keys.js";
import { hasUsableModel, nextEffort, nextModel } from "./state/models.js";
import { tracedGroup } from "./state/trace.js";

/** The first line of the scrollback: the product, or the viewed Session's title and full id. */
function Banner({ session }: { readonly session: Session | undefined }) {
  if (!session) {
    return (
      <Text bold color="cyan">
        Ze Harness
      </Text>
    );
  }
  return (
    <Text color="cyan">
      ── <Text bold>{session.title ?? "Session"}</Text> · {session.id} ──
    </Text>
  );
}

export function App({ controller }: { readonly controller: Controller }) {
  const state = useSyncExternalStore(controller.subscribe, controller.getSnapshot);
  const { exit } = useApp();
  const { stdout } = useStdout();
  useInput((input, key) => handleKey(controller, input, key));
  useEffect(() => {
    if (state.exited) exit();
  }, [state.exited, exit]);

  const view = controller.view;
  const spinner = SPINNER[state.frame] ?? SPINNER[0]!;
  const pending = controller.pending();
  const turns = view?.turns ?? [];
  const running = turns.some((turn) => turn.outcome === undefined);
  const status: StatusRowProps["state"] = view?.reconnecting
    ? "reconnecting"
    : pending?.kind === "approval"
      ? "approval"
      : pending?.kind === "question"
        ? "question"
        : running
          ? "working"
          : "idle";
  // Settled Turns are printed once to the scrollback (Static); only the running ones re-render,
  // cut to the screen's height so a frame never outgrows the terminal.
  const printedIds = new Set(state.printed.map((entry) => entry.key));
  const live = turns.filter((turn) => !printedIds.has(turn.id));
  const maxLines = Math.max(5, (stdout.rows || 40) - 14);
  const width = stdout.columns || 80;
  const menu = controller.suggestionList();
  const overlay = state.overlay;
  const queued = turns.filter((turn) => turn.phase === "pending").length;
  const traced = state.trace ? tracedGroup(turns, state.trace) : undefined;
  const props = { clientId: controller.backend.api.clientId, authorId: controller.backend.authorId, expanded: state.expanded, spinner, childSummary: (id: string) => controller.children?.get(id) };

  return (
    <Box flexDirection="column">
      {/* Keyed by Session and repaint: a switch or a repaint prints the scrollback again (after a clear). */}
      <Static key={`${view?.session?.id ?? "opening"}:${state.epoch}`} items={[{ key: "banner" } as const, ...(state.screen === "conversation" ? state.printed : [])]}>
        {(entry) =>
          !("turn" in entry) && !("part" in entry) ? (
            <Banner key={`banner:${state.epoch}`} session={view?.session} />
          ) : "turn" in entry ? (
            <TurnView key={entry.key} turn={entry.turn} {...props} width={width} />
          ) : entry.part.type === "tool" ? (
            <ToolEntry key={entry.key} part={entry.part} children={entry.children} expanded spinner="" />
          ) : (
            <ReasoningRow key={entry.key} part={entry.part} expanded running={false} />
          )
        }
      </Static>
      {state.screen === "opening" && !state.tipsHidden ? (
        <Box marginBottom={1}>
          <Text dimColor>Type a prompt and press Enter to start a Session · / for commands · Ctrl+X O open a Session by ID · Ctrl+Alt+O hides tips</Text>
        </Box>
      ) : null}
      {live.map((turn) => (
        <TurnView key={turn.id} turn={turn} {...props} maxLines={maxLines} width={width} />
      ))}
      {state.steers.map((steer) => (
        <Text key={steer.steerId} dimColor>
          ↳ queued: {steer.text}
        </Text>
      ))}
      {traced && state.trace ? <ExecuteTrace group={traced} trace={state.trace} spinner={spinner} /> : null}
      <Header
        session={view?.session}
        model={nextModel(controller)}
        effort={nextEffort(controller)}
        agent={state.next.agent ?? view?.session?.agent ?? state.defaultAgent}
        depth={state.parents.length}
      />
      {pending?.kind === "approval" && pending.permission ? <PermissionPrompt request={pending.permission} selected={state.permissionChoice} agent={pending.agent} /> : null}
      {pending?.kind === "question" && pending.question && state.question ? (
        <QuestionPrompt request={pending.question} index={state.question.index} selected={state.question.selected} />
      ) : null}
      {controller.catalog && !hasUsableModel(controller.catalog) ? <Text color="yellow">No model is usable yet · Ctrl+X P connect a provider</Text> : null}
      {view?.reconnecting ? <Text color="red">Reconnecting: {view.reconnecting}</Text> : null}
      {state.notice ? <Text color={state.notice.kind === "error" ? "red" : "gray"}>{state.notice.text}</Text> : null}
      {state.next.skills.length > 0 ? <Text dimColor>Skills for the next Turn: {state.next.skills.join(", ")}</Text> : null}
      {overlay?.kind === "picker" ? (
        <Picker
          title={overlay.spec.title}
          query={overlay.query}
          items={controller.visibleItems(overlay)}
          selected={overlay.selected}
          hint={overlay.spec.hint}
          loading={overlay.loading}
          error={overlay.error}
        />
      ) : null}
      {overlay?.kind === "login" ? (
        <Box borderStyle="round" borderColor="magenta" paddingX={1} flexDirection="column">
          <Text color="magenta" bold>
            Connect {overlay.providerId}
          </Text>
          <Text>
            Open {overlay.url} and enter the code <Text bold>{overlay.code}</Text>
          </Text>
          <Text dimColor>waiting for the login to complete · Esc cancel</Text>
        </Box>
      ) : null}
      {overlay?.kind === "open" ? <Composer text={overlay.text} placeholder="Session ID (a UUID or 8+ hex digits of one) · Enter open · Esc close" label="Open a Session" /> : null}
      {overlay === undefined && state.attachments.length > 0 ? <Attachments items={state.attachments} /> : null}
      {overlay === undefined ? (
        <Composer text={state.draft} placeholder={state.screen === "opening" ? "Ask anything…" : running ? "Follow up on the running Turn…" : "Send a prompt…"} />
      ) : null}
      {overlay === undefined && menu.length > 0 ? <Suggestions items={menu} selected={Math.min(state.suggestionIndex, menu.length - 1)} /> : null}
      <StatusRow state={status} spinner={spinner} leader={state.leader || state.shortcutsPinned} queued={queued} />
    </Box>
  );
}
