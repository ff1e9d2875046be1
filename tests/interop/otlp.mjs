// tests/interop/otlp.mjs: --otlp-endpoint as a collector sees it. A loopback
// receiver takes toolhost's OTLP/HTTP JSON exports and holds each to the
// OpenTelemetry JS packages' own ExportTraceServiceRequest (the protobuf
// root of @opentelemetry/otlp-transformer): verify(), then fromObject,
// encode, decode and toObject must give back exactly what was sent, so a
// misnamed field or a wrong type fails. Then the spans: one per request,
// the parent a traceparent in params._meta names, a new trace without one
// (or with a malformed one), names and the MCP conventions' attributes, and
// mcp.session.id in a 2025-11-25 HTTP session but never at 2026-07-28.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { isDeepStrictEqual, inspect } from 'node:util';
import { Checker, serverParams } from './common.mjs';

const require = createRequire(import.meta.url);
const t = new Checker();
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const Export = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const traceparent = `00-${TRACE}-${PARENT}-01`;

// ---- the receiver ----------------------------------------------------------
const posts = [];
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    posts.push({ path: req.url, type: req.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
});
receiver.listen(0, '127.0.0.1');
await once(receiver, 'listening');
const endpoint = `http://127.0.0.1:${receiver.address().port}`;

// OTLP/JSON writes ids as lowercase hex (not base64, as protobuf's JSON
// would) and 64-bit times as decimal strings: each is checked and turned
// into what protobufjs takes (bytes, and Long for verify), BYTES choosing
// Buffers or plain arrays of numbers. False when one is malformed.
const { Long } = require('protobufjs/minimal').util;
const HEX_IDS = { traceId: 32, spanId: 16, parentSpanId: 16 };
function toProtobuf(body, bytes, longs) {
  const copy = structuredClone(body);
  for (const rs of copy.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const span of ss.spans ?? []) {
        for (const [key, len] of Object.entries(HEX_IDS)) {
          if (span[key] === undefined) continue;
          if (!new RegExp(`^[0-9a-f]{${len}}$`).test(span[key])) return false;
          span[key] = bytes(Buffer.from(span[key], 'hex'));
        }
        for (const key of ['startTimeUnixNano', 'endTimeUnixNano']) {
          if (!/^[0-9]+$/.test(span[key] ?? '')) return false;
          if (longs) span[key] = Long.fromString(span[key], true);
        }
      }
  return copy;
}

// Decode one export strictly; its spans with their resource, or null.
function decode(post, i) {
  let body;
  try {
    body = JSON.parse(post.body);
  } catch (err) {
    t.ok(`otlp: export ${i} is JSON`, false, err.message);
    return null;
  }
  const pb = toProtobuf(body, (b) => b, true);
  if (!t.ok(`otlp: export ${i} has hex ids and decimal times`, pb !== false, post.body.slice(0, 300))) return null;
  const why = Export.verify(pb);
  if (!t.ok(`otlp: export ${i} verifies as ExportTraceServiceRequest`, why === null, why)) return null;
  const back = Export.toObject(Export.decode(Export.encode(Export.fromObject(pb)).finish()), {
    longs: String,
    bytes: Array
  });
  const want = toProtobuf(body, (b) => [...b], false);
  t.ok(`otlp: export ${i} survives protobuf encode/decode unchanged (no unknown field, no wrong type)`,
    isDeepStrictEqual(JSON.parse(JSON.stringify(back)), want),
    `sent ${inspect(want, { depth: 9 })}\ndecoded ${inspect(back, { depth: 9 })}`);
  return body.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => ({ ...s, resource: rs.resource }))));
}

const attrs = (list) => Object.fromEntries((list ?? []).map((a) => [a.key, a.value.stringValue]));

// ---- toolhost --------------------------------------------------------------
function start(args) {
  const p = serverParams({ args: ['--no-registry-cache', '--otlp-endpoint', `${endpoint}/v1/traces`, ...args] });
  const proc = spawn(p.command, p.args, { env: p.env, stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stderrText = '';
  proc.stderr.on('data', (c) => (proc.stderrText += c));
  return proc;
}

const MODERN = (extra) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  ...extra
});

async function rpc(base, headers, msg) {
  const r = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(msg)
  });
  const text = await r.text();
  const data = r.headers.get('content-type')?.startsWith('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join('')
    : text;
  return { status: r.status, session: r.headers.get('mcp-session-id'), body: data ? JSON.parse(data) : null };
}

async function overHttp() {
  const proc = start(['--http=127.0.0.1:0']);
  let port;
  for (let i = 0; i < 200 && !port; i++) {
    port = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(proc.stderrText)?.[1];
    if (!port) await new Promise((r) => setTimeout(r, 50));
  }
  if (!t.ok('otlp: toolhost serves HTTP', port, proc.stderrText)) return proc;
  const base = `http://127.0.0.1:${port}`;
  const init = await rpc(base, {}, {
    jsonrpc: '2.0', id: 'legacy-init', method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'otlp-test', version: '1' } }
  });
  t.ok('otlp: a 2025-11-25 session starts', init.session, inspect(init));
  const legacy = { 'Mcp-Session-Id': init.session, 'MCP-Protocol-Version': '2025-11-25' };
  await rpc(base, legacy, { jsonrpc: '2.0', method: 'notifications/initialized' });
  await rpc(base, legacy, {
    jsonrpc: '2.0', id: 'legacy-call', method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'hi' }, _meta: { traceparent } }
  });
  await rpc(base, legacy, { jsonrpc: '2.0', id: 'legacy-list', method: 'tools/list' });
  const modern = (method, name) => ({ 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method,
    ...(name ? { 'Mcp-Name': name } : {}) });
  const call = await rpc(base, modern('tools/call', 'echo'), {
    jsonrpc: '2.0', id: 'modern-call', method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'hi' }, _meta: MODERN({ traceparent }) }
  });
  t.ok('otlp: the 2026-07-28 call is answered', call.body?.result, inspect(call));
  await rpc(base, modern('tools/list'), {
    jsonrpc: '2.0', id: 'modern-bad-parent', method: 'tools/list',
    params: { _meta: MODERN({ traceparent: `00-${TRACE}-${PARENT}-0` }) }
  });
  await rpc(base, modern('tools/call', 'test_error_handling'), {
    jsonrpc: '2.0', id: 'modern-tool-error', method: 'tools/call',
    params: { name: 'test_error_handling', arguments: {}, _meta: MODERN() }
  });
  await rpc(base, modern('tools/call', 'no_such_tool'), {
    jsonrpc: '2.0', id: 'modern-unknown', method: 'tools/call',
    params: { name: 'no_such_tool', arguments: {}, _meta: MODERN() }
  });
  proc.kill('SIGTERM');
  return proc;
}

async function overStdio() {
  const proc = start([]);
  proc.stdin.end(JSON.stringify({
    jsonrpc: '2.0', id: 'stdio-call', method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'hi' }, _meta: MODERN() }
  }) + '\n');
  return proc;
}

// What cannot be exported to is refused at start-up, naming the URL.
async function refused(url, why) {
  const p = serverParams({ args: ['--otlp-endpoint', url] });
  const proc = spawn(p.command, p.args, { env: p.env, stdio: ['pipe', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (c) => (err += c));
  proc.stdin.end();
  const [code] = await once(proc, 'exit');
  t.ok(`otlp: --otlp-endpoint ${url} is a usage error`, code === 2 && why.test(err), `${code}: ${err}`);
}
await t.guard('otlp: refusals', async () => {
  await refused('https://127.0.0.1:4318', /https is not supported/);
  await refused('ftp://127.0.0.1', /is not an http:\/\/ URL/);
  await refused('http://127.0.0.1:99999', /port is not 1 to 65535/);
});

await t.guard('otlp: run', async () => {
  for (const run of [overHttp, overStdio]) {
    const proc = await run();
    const [code] = await once(proc, 'exit');
    t.ok(`otlp: ${run.name}: toolhost exits 0`, code === 0, `${code}\n${proc.stderrText}`);
    t.ok(`otlp: ${run.name}: no export failed`, !/not exported/.test(proc.stderrText), proc.stderrText);
  }
  // The exit flushed every span: each POST was answered before the exit.
  t.ok('otlp: spans were exported', posts.length > 0);
  for (const p of posts) {
    t.eq('otlp: POST path', p.path, '/v1/traces');
    t.eq('otlp: Content-Type', p.type, 'application/json');
  }
  const spans = posts.flatMap((p, i) => decode(p, i) ?? []);
  const byId = (id) => spans.filter((s) => attrs(s.attributes)['jsonrpc.request.id'] === id);
  const one = (id) => {
    const found = byId(id);
    t.ok(`otlp: one span for request ${id}`, found.length === 1, inspect(found.map((s) => s.name)));
    return found[0] ?? { attributes: [] };
  };

  const res = attrs(spans[0]?.resource?.attributes);
  t.eq('otlp: resource service.name', res['service.name'], 'toolhost');
  t.ok('otlp: resource service.version', /^\d+\.\d+/.test(res['service.version'] ?? ''), res['service.version']);
  t.ok('otlp: every span is SERVER', spans.every((s) => s.kind === 2), inspect(spans.map((s) => s.kind)));

  const init = one('legacy-init');
  t.eq('otlp: initialize span name', init.name, 'initialize');
  t.eq('otlp: initialize: the negotiated version', attrs(init.attributes)['mcp.protocol.version'], '2025-11-25');
  t.eq('otlp: initialize carries its session', attrs(init.attributes)['mcp.session.id'] !== undefined, true);

  const lc = one('legacy-call');
  const la = attrs(lc.attributes);
  t.eq('otlp: traceparent: the trace continues', lc.traceId, TRACE);
  t.eq('otlp: traceparent: the parent span', lc.parentSpanId, PARENT);
  t.eq('otlp: tools/call span name', lc.name, 'tools/call echo');
  t.eq('otlp: legacy call attributes', {
    method: la['mcp.method.name'], tool: la['gen_ai.tool.name'], version: la['mcp.protocol.version'],
    transport: la['network.transport'], session: la['mcp.session.id'] === attrs(init.attributes)['mcp.session.id'],
    error: la['error.type']
  }, { method: 'tools/call', tool: 'echo', version: '2025-11-25', transport: 'tcp', session: true, error: undefined });
  t.ok('otlp: a successful call has no error status', !lc.status?.code, inspect(lc.status));

  const ll = one('legacy-list');
  t.ok('otlp: without traceparent: a root span', !ll.parentSpanId, ll.parentSpanId);
  t.ok('otlp: without traceparent: a new trace', /^[0-9a-f]{32}$/.test(ll.traceId) && ll.traceId !== TRACE &&
    !/^0+$/.test(ll.traceId), ll.traceId);
  t.eq('otlp: tools/list span name', ll.name, 'tools/list');

  const mc = one('modern-call');
  const ma = attrs(mc.attributes);
  t.eq('otlp: 2026-07-28 traceparent: the parent', [mc.traceId, mc.parentSpanId], [TRACE, PARENT]);
  t.eq('otlp: 2026-07-28 version', ma['mcp.protocol.version'], '2026-07-28');
  t.ok('otlp: 2026-07-28: no mcp.session.id on any span', spans.filter((s) =>
    attrs(s.attributes)['mcp.protocol.version'] === '2026-07-28').every((s) =>
    attrs(s.attributes)['mcp.session.id'] === undefined), inspect(ma));

  const bad = one('modern-bad-parent');
  t.ok('otlp: a malformed traceparent is ignored: a root span of a new trace',
    !bad.parentSpanId && bad.traceId !== TRACE, inspect(bad));

  const te = one('modern-tool-error');
  t.eq('otlp: isError: error.type tool_error, status Error',
    [attrs(te.attributes)['error.type'], te.status?.code], ['tool_error', 2]);
  const un = one('modern-unknown');
  t.eq('otlp: an unknown tool: the JSON-RPC code as error.type',
    [un.name, attrs(un.attributes)['error.type'], un.status?.code], ['tools/call no_such_tool', '-32602', 2]);

  const sc = one('stdio-call');
  t.eq('otlp: stdio: network.transport pipe', attrs(sc.attributes)['network.transport'], 'pipe');
  t.ok('otlp: spans end after they start', spans.every((s) => BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano)));
});
receiver.close();
process.exitCode = t.report();
