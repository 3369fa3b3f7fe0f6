// What each slash command and leader binding does, and the pickers they open: sessions,
// models (then effort: models.ts), agents, Skills (multi-select), forks and sub-agents.
import type { SlashCommand } from "../commands.js";
import { promptText, firstLine, shortId } from "../format.js";
import type { Controller, PickerSpec } from "./controller.js";
import { effortCommand, modelPicker } from "./models.js";
import { base64Command, imageCommand } from "./paste.js";

/** Commands that need a Session say so instead of acting. */
function needSession(controller: Controller, command: string): string {
  const sessionId = controller.sessionId;
  if (sessionId === undefined) throw new Error(`/${command} needs a Session: send a prompt first`);
  return sessionId;
}

export async function runSlashCommand(controller: Controller, command: SlashCommand, argument: string): Promise<void> {
  switch (command.name) {
    case "new":
      return controller.newSession(argument === "" ? undefined : argument);
    case "queue":
      if (argument === "" && controller.state.attachments.length === 0) throw new Error("/queue needs TEXT (or an attached image)");
      return controller.queue(argument, controller.state.attachments);
    case "steer":
      if (argument === "" && controller.state.attachments.length === 0) throw new Error("/steer needs TEXT (or an attached image)");
      needSession(controller, "steer");
      return controller.steer(argument, false, controller.state.attachments);
    case "sessions":
      return controller.openPicker(sessionPicker(controller, argument));
    case "models":
      return controller.openPicker(modelPicker(controller, argument));
    case "effort":
      return effortCommand(controller, argument);
    case "agents":
      needSession(controller, "agents");
      return controller.openPicker(agentPicker(controller, argument));
    case "skills":
      return controller.openPicker(skillPicker(controller, argument));
    case "fork":
      needSession(controller, "fork");
      return argument === "" ? controller.openPicker(forkPicker(controller)) : forkAt(controller, argument);
    case "subagents":
      needSession(controller, "subagents");
      return controller.openPicker(subagentPicker(controller));
    case "back":
      if (!(await controller.back())) throw new Error("/back: this Session is not a sub-agent");
      return;
    case "image":
      return imageCommand(controller, argument);
    case "base64":
      return base64Command(controller, argument);
    case "send":
      return controller.send(argument);
    case "mouse": {
      if (argument !== "" && argument !== "on" && argument !== "off") throw new Error("/mouse takes on or off");
      const mouse = argument === "" ? !controller.state.mouse : argument === "on";
      controller.terminal?.mouse(mouse);
      controller.preferences.setMouseOff(!mouse);
      controller.update({ mouse });
      return controller.info(mouse ? "mouse capture on: drag to copy, click rows (Shift+drag selects in the terminal)" : "mouse capture off (also in later runs): the terminal selects, copies and scrolls");
    }
    case "exit":
      return controller.quit();
  }
}

export function sessionPicker(controller: Controller, query = ""): PickerSpec {
  return {
    title: "Sessions",
    hint: "↑/↓ move · Enter open · Ctrl+R refresh · Esc close",
    query,
    load: async () =>
      (await controller.backend.sessions()).map((session) => ({
        id: session.id,
        label: session.title ?? shortId(session.id),
        detail: `${shortId(session.id)} · ${new Date(session.updatedAt).toLocaleString()}${session.id === controller.sessionId ? " · current" : ""}`,
      })),
    choose: async (item) => {
      controller.closeOverlay();
      await controller.openSession(item.id);
    },
  };
}

export function agentPicker(controller: Controller, query = ""): PickerSpec {
  return {
    title: "Agents",
    hint: "↑/↓ move · Enter select · Ctrl+R refresh · Esc close",
    query,
    load: async () => {
      const { agents } = await controller.backend.agents(controller.sessionId!);
      return agents.filter((agent) => agent.mode !== "subagent").map((agent) => ({ id: agent.id, label: agent.id, detail: agent.description }));
    },
    choose: (item) => {
      controller.closeOverlay();
      controller.update({ next: { ...controller.state.next, agent: item.id } });
    },
  };
}

/** Tab / Shift+Tab: the next (previous) primary agent. */
export function cycleAgent(controller: Controller, step: 1 | -1): void {
  const agents = controller.state.agents;
  if (agents.length === 0) return;
  const current = controller.state.next.agent ?? controller.view?.session?.agent;
  const index = current === undefined ? (step === 1 ? -1 : 0) : agents.indexOf(current);
  controller.update({ next: { ...controller.state.next, agent: agents[(index + step + agents.length) % agents.length] } });
}

export function skillPicker(controller: Controller, query = ""): PickerSpec {
  const spec: PickerSpec = {
    title: "Skills for the next Turn",
    hint: "↑/↓ move · Tab details · Space/Enter toggle · Ctrl+R refresh · Esc close",
    query,
    load: async () => {
      const chosen = controller.state.next.skills;
      return (await controller.backend.skills(controller.sessionId)).map((skill) => ({ id: skill.id, label: skill.id, detail: skill.displayName, marked: chosen.includes(skill.id) }));
    },
    choose: () => {},
    tab: (item) => controller.info(`${item.id}: ${item.detail ?? ""}`),
    multi: {
      toggle: (item) => {
        const skills = controller.state.next.skills;
        controller.update({ next: { ...controller.state.next, skills: skills.includes(item.id) ? skills.filter((id) => id !== item.id) : [...skills, item.id] } });
        const overlay = controller.state.overlay;
        if (overlay?.kind === "picker") {
          const marked = controller.state.next.skills;
          controller.update({ overlay: { ...overlay, items: overlay.items.map((entry) => ({ ...entry, marked: marked.includes(entry.id) })) } });
        }
      },
      done: () => {
        const skills = controller.state.next.skills;
        if (skills.length > 0) controller.info(`Skills for the next Turn: ${skills.join(", ")}`);
      },
    },
  };
  return spec;
}

export function forkPicker(controller: Controller): PickerSpec {
  return {
    title: "Fork before a Turn",
    hint: "↑/↓ move · Enter fork · Esc close",
    load: async () =>
      [...(controller.view?.turns ?? [])].reverse().map((turn) => ({ id: turn.id, label: `#${turn.sequence}`, detail: firstLine(promptText(turn), 60) })),
    choose: async (item) => {
      controller.closeOverlay();
      await forkAt(controller, item.id);
    },
  };
}

async function forkAt(controller: Controller, target: string): Promise<void> {
  const turns = controller.view?.turns ?? [];
  const turn = /^\d+$/.test(target) ? turns.find((candidate) => candidate.sequence === Number(target)) : turns.find((candidate) => candidate.id === target.toLowerCase());
  if (!turn) throw new Error(`/fork: no Turn ${target} in this Session`);
  const forked = await controller.backend.fork(controller.sessionId!, turn.id);
  await controller.openSession(forked);
  controller.info(`forked before Turn #${turn.sequence}; its prompt is yours to resend`);
  controller.update({ draft: promptText(turn) });
}

export function subagentPicker(controller: Controller): PickerSpec {
  return {
    title: "Sub-agents",
    hint: "↑/↓ move · Enter open · Esc close",
    load: async () =>
      (await controller.backend.children(controller.sessionId!)).map((child) => ({ id: child.id, label: child.agent ?? "sub-agent", detail: `${child.title ?? ""} ${shortId(child.id)}`.trim() })),
    choose: async (item) => {
      controller.closeOverlay();
      await controller.openSession(item.id, { asChild: true });
    },
  };
}

/** Ctrl+X ↓: the first sub-agent, directly. */
export async function openFirstSubagent(controller: Controller): Promise<void> {
  const children = await controller.backend.children(needSession(controller, "subagents"));
  const first = children[0];
  if (!first) throw new Error("this Session has no sub-agents");
  await controller.openSession(first.id, { asChild: true });
}

/** Alt+← / Alt+→: the previous or next sibling of the viewed sub-agent. */
export async function openSibling(controller: Controller, step: 1 | -1): Promise<void> {
  const parent = controller.state.parents[controller.state.parents.length - 1];
  if (parent === undefined) return;
  const siblings = await controller.backend.children(parent);
  const index = siblings.findIndex((child) => child.id === controller.sessionId);
  const next = siblings[(index + step + siblings.length) % siblings.length];
  if (next && next.id !== controller.sessionId) await controller.openSession(next.id, { parents: controller.state.parents });
}

/** Ctrl+X C: compact the Session context. */
export async function compact(controller: Controller): Promise<void> {
  await controller.backend.compact(needSession(controller, "compact"));
  controller.info("compaction requested");
}

