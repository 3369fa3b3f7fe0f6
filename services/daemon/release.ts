// The release a daemon must run and the binary it is spawned from, without loading services/host.
import { join } from "node:path";
import { locatePackage } from "../contract/package.js";

export const daemonRelease = (): string => locatePackage().release;

/** The executable a daemon is spawned from: this package's bin/ze-harness.js. */
export const binaryPath = (): string => join(locatePackage().root, "bin", "ze-harness.js");
