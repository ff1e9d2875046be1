// bench/node/sdk-http-server.mjs: the official TypeScript SDK's Streamable
// HTTP server (@modelcontextprotocol/sdk 1.x, McpServer on node:http) with
// the benchmark's `echo` tool, set up as the SDK's own examples do:
//   stateless  a new server and transport per request (sessionIdGenerator
//              undefined; the SDK refuses to reuse a stateless transport)
//   session    one transport per Mcp-Session-Id, created at initialize
// Both answer application/json (enableJsonResponse), like toolhost when no
// notification precedes the result. Listens on 127.0.0.1, a free port, and
// says so on stderr the way toolhost does ("listening on http://...").
//   usage: node sdk-http-server.mjs stateless|session
import http from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';

const modules = process.env.SDK_NODE_MODULES ??
  path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'tests', 'interop', 'node_modules');
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js');
const { z } = await load('zod/index.js');

const mode = process.argv[2] ?? 'session';
if (mode !== 'stateless' && mode !== 'session') {
  process.stderr.write('usage: sdk-http-server.mjs stateless|session\n');
  process.exit(2);
}

function newServer() {
  const server = new McpServer({ name: 'sdk-bench-http', version: '1.0.0' });
  server.registerTool('echo', {
    description: 'Return the given text unchanged, as one text block.',
    inputSchema: { text: z.string() }
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try { resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))); } catch (e) { reject(e); }
    });
    req.on('error', reject);
  });
}

const sessions = new Map();

async function handle(req, res) {
  if (req.url !== '/mcp') { res.writeHead(404).end(); return; }
  const body = req.method === 'POST' ? await readBody(req) : undefined;
  if (mode === 'stateless') {
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    return;
  }
  const sid = req.headers['mcp-session-id'];
  let transport = sid ? sessions.get(sid) : undefined;
  if (!transport) {
    if (sid || body?.method !== 'initialize') {
      res.writeHead(sid ? 404 : 400, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no such session' }, id: null }));
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => { sessions.set(id, transport); }
    });
    transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, body);
}

const httpServer = http.createServer((req, res) => {
  handle(req, res).catch((e) => {
    if (!res.headersSent) res.writeHead(500).end(String(e));
  });
});
httpServer.keepAliveTimeout = 60000;
httpServer.listen(0, '127.0.0.1', () => {
  process.stderr.write(`sdk-http-server: listening on http://127.0.0.1:${httpServer.address().port}/mcp\n`);
});
process.on('SIGTERM', () => httpServer.close(() => process.exit(0)));
