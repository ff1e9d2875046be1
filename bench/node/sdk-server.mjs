// bench/node/sdk-server.mjs: the official TypeScript SDK's stdio server
// (@modelcontextprotocol/sdk 1.x, McpServer) with the benchmark's tools:
// `echo` (returns its text argument as one text block, like toolhost's),
// plus, with an argument N, the N generated tools p0001..pNNNN that
// bench/genplugins.sh builds as toolhost plugins (same names, descriptions
// and schema). The SDK is the one pinned by tests/interop/package-lock.json;
// SDK_NODE_MODULES names its node_modules (bench/run.sh sets it).
//   usage: node sdk-server.mjs [N]
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.SDK_NODE_MODULES ??
  path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'tests', 'interop', 'node_modules');
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
const { StdioServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/stdio.js');
const { z } = await load('zod/index.js');

const server = new McpServer({ name: 'sdk-bench', version: '1.0.0' });
const echo = async ({ text }) => ({ content: [{ type: 'text', text }] });
server.registerTool('echo', {
  description: 'Return the given text unchanged, as one text block.',
  inputSchema: { text: z.string() }
}, echo);
const n = Number(process.argv[2] ?? 0);
for (let i = 1; i <= n; i++) {
  const name = 'p' + String(i).padStart(4, '0');
  server.registerTool(name, {
    description: `Generated benchmark tool ${i}: returns its text unchanged.`,
    inputSchema: { text: z.string() }
  }, echo);
}
await server.connect(new StdioServerTransport());
