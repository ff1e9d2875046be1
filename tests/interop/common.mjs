// tests/interop/common.mjs: what both SDK clients check, and how. Holds the
// expected result of echo and of every conformance fixture tool, a tap that
// records the raw JSON-RPC traffic of a client transport, and the suite of
// checks one connected client runs. Knows no SDK: the scripts pass in their
// Client and transport.
import { isDeepStrictEqual, inspect } from 'node:util';

// The 1x1 red PNG and minimal WAV of the conformance suite's reference
// server (examples/servers/typescript/everything-server.ts).
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const text = (t) => ({ type: 'text', text: t });

// What each fixture of src/scenarios/server/tools.ts must return. `logs` are
// the notifications/message data strings at level info, `progress` the
// notifications/progress values, both in order.
export const FIXTURES = {
  test_simple_text: {
    content: [text('This is a simple text response for testing.')]
  },
  test_image_content: {
    content: [{ type: 'image', data: PNG, mimeType: 'image/png' }]
  },
  test_audio_content: {
    content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }]
  },
  test_embedded_resource: {
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.'
        }
      }
    ]
  },
  test_multiple_content_types: {
    content: [
      text('Multiple content types test:'),
      { type: 'image', data: PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: '{"test":"data","value":123}'
        }
      }
    ]
  },
  test_tool_with_logging: {
    content: [text('Tool with logging executed successfully')],
    logs: ['Tool execution started', 'Tool processing data', 'Tool execution completed']
  },
  test_tool_with_progress: {
    content: [text('Tool with progress executed successfully')],
    progress: [0, 50, 100].map((p) => ({
      progress: p,
      total: 100,
      message: `Completed step ${p} of 100`
    }))
  },
  test_error_handling: {
    isError: true,
    content: [text('This tool intentionally returns an error for testing')]
  }
};

// Text that exercises JSON escaping and UTF-8 on the way through echo.
const ECHO_TEXT = 'héllo, toolhost ✓ "quoted" \\ back\tslash\nsecond line 🚀';

// Where toolhost and its plugins are: set by tests/interop.mk from the build
// directory. TOOLHOST_WRAPPER, if set in the environment, is a command line
// to run toolhost under (e.g. "valgrind --error-exitcode=1 --leak-check=full").
// The child gets the whole environment so sanitizer and libtool variables
// reach it. A script that needs its own plugin set passes `dirs` (in place
// of those directories), extra toolhost `args` and `env` additions.
export function serverParams({ dirs, args = [], env = {} } = {}) {
  const toolhost = process.env.TOOLHOST;
  dirs ??= (process.env.TOOLHOST_PLUGIN_DIRS ?? '').split(':').filter(Boolean);
  if (!toolhost || dirs.length === 0)
    throw new Error('TOOLHOST and TOOLHOST_PLUGIN_DIRS must be set (tests/interop.mk sets them)');
  const [command, ...prefix] = [...(process.env.TOOLHOST_WRAPPER ?? '').split(/\s+/).filter(Boolean), toolhost];
  return {
    command,
    args: [...prefix, ...dirs.flatMap((d) => ['--plugin-dir', d]), ...args],
    env: { ...process.env, ...env },
    stderr: 'inherit'
  };
}

// Counts and prints checks; the scripts end with report().
export class Checker {
  constructor() {
    this.passed = 0;
    this.failed = 0;
  }

  ok(name, cond, detail) {
    if (cond) {
      this.passed++;
      console.log(`ok: ${name}`);
    } else {
      this.failed++;
      console.log(`FAIL: ${name}${detail === undefined ? '' : `: ${detail}`}`);
    }
    return cond;
  }

  eq(name, actual, expected) {
    return this.ok(
      name,
      isDeepStrictEqual(actual, expected),
      `got ${inspect(actual, { depth: 8 })}, want ${inspect(expected, { depth: 8 })}`
    );
  }

  // Runs FN; an exception is one failed check named NAME.
  async guard(name, fn) {
    try {
      await fn();
    } catch (err) {
      this.ok(name, false, `threw ${err?.stack ?? err}`);
    }
  }

  report() {
    console.log(`${this.passed} passed, ${this.failed} failed`);
    return this.failed === 0 && this.passed > 0 ? 0 : 1;
  }
}

// Records every JSON-RPC message the transport receives and sends, as the
// client's own view cannot show what went over the wire (the progress token,
// the order of notifications and response, resultType). Install before
// connect. The SDKs chain onto an existing onmessage when they set theirs, so
// a message may pass the wrapper twice; a WeakSet keeps one record.
export function tapTransport(transport) {
  const wire = [];
  const seen = new WeakSet();
  const record = (dir, msg) => {
    if (msg && typeof msg === 'object' && !seen.has(msg)) {
      seen.add(msg);
      wire.push({ dir, msg });
    }
  };
  let inner;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => inner,
    set: (fn) => {
      inner =
        typeof fn === 'function'
          ? (msg, ...rest) => {
              record('in', msg);
              return fn(msg, ...rest);
            }
          : fn;
    }
  });
  const send = transport.send.bind(transport);
  transport.send = (msg, ...rest) => {
    record('out', msg);
    return send(msg, ...rest);
  };
  return wire;
}

// The raw messages of the last tools/call for TOOL: the request, the
// notifications received between it and its response, and the response.
function lastCall(wire, tool) {
  let start = -1;
  for (let i = wire.length - 1; i >= 0; i--) {
    const { dir, msg } = wire[i];
    if (dir === 'out' && msg.method === 'tools/call' && msg.params?.name === tool) {
      start = i;
      break;
    }
  }
  if (start < 0) return undefined;
  const request = wire[start].msg;
  const notifications = [];
  let response;
  for (const { dir, msg } of wire.slice(start + 1)) {
    if (dir !== 'in') continue;
    if (msg.id === request.id && msg.method === undefined) {
      response = msg;
      break;
    }
    if (msg.method !== undefined && msg.id === undefined) notifications.push(msg);
  }
  return { request, notifications, response };
}

const isErrorOf = (result) => result.isError ?? false;

// One connected client's checks. The script passes what differs between
// SDKs and eras:
//   client         a connected Client (listTools, callTool)
//   wire           the tapTransport() record of its transport
//   era            'legacy' or 'modern'
//   setLogLevel(l) ask for log notifications at level l (null: none asked
//                  for); returns extra tools/call params (modern: _meta)
//   onLog(fn)      call fn(params) for each notifications/message
//   callWithProgress(params, fn)  tools/call with a progress token, fn(p)
//                  for each progress report
//   errors         the collectErrors() list of the client
export async function runSuite(t, label, { client, wire, era, setLogLevel, onLog, callWithProgress, errors }) {
  const p = (name) => `${label}: ${name}`;

  await t.guard(p('tools/list'), async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of ['echo', ...Object.keys(FIXTURES)]) {
      const tool = byName.get(name);
      if (!t.ok(p(`tools/list has ${name}`), tool !== undefined, `listed: ${[...byName.keys()]}`))
        continue;
      t.ok(
        p(`${name} description is 10-500 characters`),
        typeof tool.description === 'string' &&
          tool.description.length >= 10 &&
          tool.description.length <= 500,
        inspect(tool.description)
      );
      t.eq(p(`${name} inputSchema type`), tool.inputSchema?.type, 'object');
    }
    t.ok(
      p('tool names match ^[a-z][a-z0-9_]*$'),
      tools.every((tool) => /^[a-z][a-z0-9_]*$/.test(tool.name)),
      tools.map((tool) => tool.name).join(',')
    );
    t.eq(p('echo requires text'), byName.get('echo')?.inputSchema?.required, ['text']);
  });

  await t.guard(p('echo'), async () => {
    const result = await client.callTool({ name: 'echo', arguments: { text: ECHO_TEXT } });
    t.eq(p('echo content'), result.content, [text(ECHO_TEXT)]);
    t.eq(p('echo isError'), isErrorOf(result), false);
  });

  // Plain calls first: no log level asked for, no progress token.
  await setLogLevel(null);
  for (const [name, want] of Object.entries(FIXTURES)) {
    await t.guard(p(`${name} call`), async () => {
      const result = await client.callTool({ name, arguments: {} });
      t.eq(p(`${name} content`), result.content, want.content);
      t.eq(p(`${name} isError`), isErrorOf(result), want.isError ?? false);
      t.eq(p(`${name} structuredContent`), result.structuredContent, undefined);
      const raw = lastCall(wire, name);
      t.ok(p(`${name} response on the wire`), raw?.response?.result !== undefined, inspect(raw));
      if (era === 'modern')
        t.eq(p(`${name} resultType`), raw?.response?.result?.resultType, 'complete');
      // No token was given: no progress. No log level was asked for: in
      // the modern era no log messages either; a legacy session before
      // logging/setLevel may get them (both SDK servers send them), so that
      // case is not held against toolhost.
      t.eq(
        p(`${name} sends no notifications unasked`),
        raw?.notifications
          .map((n) => n.method)
          .filter((m) => era === 'modern' || m !== 'notifications/message'),
        []
      );
    });
  }

  // Logging at debug: the three info messages, in order, before the result.
  await t.guard(p('logging at debug'), async () => {
    const extra = (await setLogLevel('debug')) ?? {};
    const got = [];
    onLog((params) => got.push(params));
    const name = 'test_tool_with_logging';
    const result = await client.callTool({ name, arguments: {}, ...extra });
    onLog(() => {});
    const want = FIXTURES[name];
    t.eq(
      p('log notifications received before the result'),
      got.map((m) => ({ level: m.level, data: m.data })),
      want.logs.map((data) => ({ level: 'info', data }))
    );
    t.ok(
      p('log notifications name the tool as logger'),
      got.length > 0 && got.every((m) => m.logger === name),
      inspect(got.map((m) => m.logger))
    );
    t.eq(p(`${name} content with logging`), result.content, want.content);
  });

  // At warning, info messages stay on the server's stderr.
  await t.guard(p('logging at warning'), async () => {
    const extra = (await setLogLevel('warning')) ?? {};
    const name = 'test_tool_with_logging';
    await client.callTool({ name, arguments: {}, ...extra });
    const raw = lastCall(wire, name);
    t.eq(
      p('no info log notifications at warning'),
      raw?.notifications.filter((n) => n.method === 'notifications/message'),
      []
    );
  });
  await setLogLevel(null);

  // Progress: with a token, three reports echoing it, before the result.
  // Both SDKs dispatch notifications a microtask later than responses, so a
  // report that arrives in the same read as the response reaches a handler
  // already retired: the SDK drops it and calls onerror "Received a progress
  // notification for an unknown token" (modelcontextprotocol/typescript-sdk#2580,
  // open). The wire record is therefore what proves all three
  // were sent in time; what the SDK delivered must be a non-empty prefix.
  let progressToken;
  await t.guard(p('progress'), async () => {
    const name = 'test_tool_with_progress';
    const got = [];
    const result = await callWithProgress({ name, arguments: {} }, (prog) => got.push(prog));
    const want = FIXTURES[name];
    const delivered = got.map(({ progress, total, message }) => ({ progress, total, message }));
    t.ok(
      p('progress reports delivered by the SDK are the expected ones, in order'),
      delivered.length > 0 && isDeepStrictEqual(delivered, want.progress.slice(0, delivered.length)),
      inspect(delivered)
    );
    const raw = lastCall(wire, name);
    const token = raw?.request?.params?._meta?.progressToken;
    progressToken = token;
    t.eq(
      p('progress notifications on the wire before the result'),
      raw?.notifications.map(({ params: { progress, total, message } }) => ({ progress, total, message })),
      want.progress
    );
    t.ok(p('progress request carried a token'), token !== undefined, inspect(raw?.request));
    t.ok(
      p('every progress notification echoes the token'),
      raw?.notifications.length === 3 &&
        raw.notifications.every(
          (n) => n.method === 'notifications/progress' && n.params.progressToken === token
        ),
      inspect(raw?.notifications, { depth: 5 })
    );
    t.eq(p(`${name} content with progress`), result.content, want.content);
  });

  // A name no plugin registered is a protocol error, not a tool result.
  await t.guard(p('unknown tool'), async () => {
    let code;
    try {
      await client.callTool({ name: 'no_such_tool', arguments: {} });
    } catch (err) {
      code = err?.code;
    }
    const raw = lastCall(wire, 'no_such_tool');
    t.eq(p('unknown tool error code on the wire'), raw?.response?.error?.code, -32602);
    t.eq(p('unknown tool error message'), raw?.response?.error?.message, 'Unknown tool: no_such_tool');
    t.ok(p('unknown tool rejects the call'), code !== undefined, `code ${code}`);
  });

  const unexpected = errors.filter(
    (err) =>
      !(
        progressToken !== undefined &&
        String(err?.message).startsWith('Received a progress notification for an unknown token') &&
        String(err.message).includes(`"progressToken":${JSON.stringify(progressToken)}`)
      )
  );
  t.eq(p('no client errors (but the late-progress race above)'), unexpected.map(String), []);
}

// Collects what the client reports through onerror, for runSuite's check.
export function collectErrors(client) {
  const errors = [];
  client.onerror = (err) => errors.push(err);
  return errors;
}

// The toolhost child of a connected StdioClientTransport. Neither SDK
// exposes its exit status, so this reads the transports' private _process
// (present in both); undefined if a future SDK renames it, which the exit
// check below then reports.
export const serverProcess = (transport) => transport._process;

// Closes the client (the SDKs end toolhost's stdin, and signal it only if it
// is still running 2 s later) and checks that toolhost exited by itself with
// status 0: EOF ends the server cleanly, and a sanitizer report fails here.
export async function closeAndCheckExit(t, label, client, proc) {
  await client.close();
  if (!t.ok(`${label}: toolhost process observable`, proc !== undefined)) return;
  if (proc.exitCode === null && proc.signalCode === null)
    await new Promise((resolve) => proc.once('exit', resolve));
  // killed: the SDK had to signal it, so it did not leave at EOF alone.
  t.ok(`${label}: toolhost exits 0 at EOF`, proc.exitCode === 0 && proc.signalCode === null && !proc.killed,
       `exit code ${proc.exitCode}, signal ${proc.signalCode}, signalled by the SDK: ${proc.killed}`);
}
