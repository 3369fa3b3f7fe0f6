import { fileURLToPath } from 'node:url';
import { definePlugin } from 'ze-harness/plugin';

// An MCP server definition: Core starts it (here the stdio server beside this file, run by the
// same Node), lists its tools and offers them to the model as `<name>_<tool>` (`calc_add`).
export default definePlugin({
  id: 'example.mcp',
  setup: (context) => {
    context.mcp.register({
      kind: 'local',
      id: 'example.calc',
      name: 'calc',
      protocolVersions: ['2025-06-18'],
      transport: { kind: 'stdio', command: process.execPath, arguments: [fileURLToPath(new URL('./server.mjs', import.meta.url))], environment: {} },
    });
  },
});
