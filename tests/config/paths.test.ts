import { describe, expect, it } from "vitest";
import { configDirectory, globalConfigFile, homeDirectory, stateDirectory } from "../../services/config/index.js";

describe("config and state paths", () => {
  it("uses an absolute XDG_CONFIG_HOME for the config directory", () => {
    expect(configDirectory({ HOME: "/home/u", XDG_CONFIG_HOME: "/xdg/config" })).toBe("/xdg/config/ze-harness");
    expect(globalConfigFile({ HOME: "/home/u", XDG_CONFIG_HOME: "/xdg/config" })).toBe("/xdg/config/ze-harness/config.json");
  });

  it("falls back to ~/.config when XDG_CONFIG_HOME is unset, empty or relative", () => {
    expect(configDirectory({ HOME: "/home/u" })).toBe("/home/u/.config/ze-harness");
    expect(configDirectory({ HOME: "/home/u", XDG_CONFIG_HOME: "" })).toBe("/home/u/.config/ze-harness");
    expect(configDirectory({ HOME: "/home/u", XDG_CONFIG_HOME: "relative/config" })).toBe("/home/u/.config/ze-harness");
  });

  it("uses an absolute XDG_DATA_HOME for the state directory", () => {
    expect(stateDirectory({ HOME: "/home/u", XDG_DATA_HOME: "/xdg/data" })).toBe("/xdg/data/ze-harness");
  });

  it("falls back to ~/.local/share when XDG_DATA_HOME is unset or relative", () => {
    expect(stateDirectory({ HOME: "/home/u" })).toBe("/home/u/.local/share/ze-harness");
    expect(stateDirectory({ HOME: "/home/u", XDG_DATA_HOME: "data" })).toBe("/home/u/.local/share/ze-harness");
  });

  it("XDG_CONFIG_HOME does not move the state directory and XDG_DATA_HOME does not move the config", () => {
    const env = { HOME: "/home/u", XDG_CONFIG_HOME: "/c", XDG_DATA_HOME: "/d" };
    expect(configDirectory(env)).toBe("/c/ze-harness");
    expect(stateDirectory(env)).toBe("/d/ze-harness");
  });

  it("ignores a relative HOME and asks the operating system instead", () => {
    const home = homeDirectory({ HOME: "not/absolute" });
    expect(home.startsWith("/")).toBe(true);
    expect(stateDirectory({ HOME: "not/absolute" })).toBe(`${home}/.local/share/ze-harness`);
  });
});
