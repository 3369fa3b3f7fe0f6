// The provider suites again with the Node host's wire transport (services/providers/node-transport.ts:
// node:http with keep-alive agents) in place of the global fetch, which the other files use as
// the Worker host does: the SDK-free Chat Completions path must stream, fail and bound the same
// over both. Vitest isolates modules per file, so the transport chosen here stays in this file.
import { useWireTransport } from "../../services/providers/index.js";
import { nodeTransport } from "../../services/providers/node-transport.js";

useWireTransport(nodeTransport);
await import("./adapters.test.js");
await import("./failures.test.js");
await import("./leaks.test.js");
