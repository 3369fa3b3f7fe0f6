// The two wire transports the provider suites run over (each scenario under `describe.each`): the
// global fetch, which the Worker host keeps, and node:http with keep-alive agents, which the Node
// host installs (services/providers/node-transport.ts).
import { fetchTransport, type WireTransport } from "../../services/providers/transport.js";
import { nodeTransport } from "../../services/providers/node-transport.js";

export const WIRE_TRANSPORTS: readonly (readonly [string, WireTransport])[] = [
  ["fetch", fetchTransport],
  ["node:http", nodeTransport],
];
