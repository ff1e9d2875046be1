// tests/interop/primitives.mjs: the checks of resources, prompts and
// completion that primitives-v1.mjs and primitives-v2.mjs run with their
// SDK's client, in either era: listings walked page by page through
// nextCursor, reads of the bundled files plugin and the resource fixtures
// (escapes from the served root refused), the error each revision gives a
// missing resource, update notifications of subscribed resources, prompts
// with argument checking, completions, and list_changed after a hot reload.
// Knows no SDK: a script passes connect() (see runPrimitives).
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';

import { closeAndCheckExit } from './common.mjs';

const PAGE = 2; // --page-size of the listing sessions: every list takes several pages
const WAIT_MS = 20000; // only bounds a wait for a notification; never asserted

// The 1x1 red PNG of the conformance fixtures (tests/conformance/*.c).
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const text = (t) => ({ type: 'text', text: t });
const user = (content) => ({ role: 'user', content });

// What the files root holds (made by Fixtures.filesRoot) and what reading it
// must give. b.bin is not UTF-8, so it comes as a base64 blob.
const A_TXT = 'hello from the served directory\n';
const B_BIN = Buffer.from([0, 1, 2, 0xff, 0xfe]);
const C_MD = '# deep\n';
// Files whose names a URI must percent-encode: listed, and read back by
// the listed URI.
const ENCODED = [['a b%.txt', 'file:///a%20b%25.txt', 'a space and a percent sign\n'],
  ['\u00e9t\u00e9.txt', 'file:///%C3%A9t%C3%A9.txt', 'non-ASCII name\n']];

// The plugins' .so files, copied into private directories so each session
// serves exactly the set it checks (resfix and promptfix both claim the
// template mem://items/{id}) and the reload session can add and remove files.
export class Fixtures {
  constructor() {
    this.tmp = mkdtempSync(join(tmpdir(), 'th-interop-'));
    // tests/interop.mk: the bundled plugins and conformance fixtures, then
    // the resource and prompt test plugins.
    this.from = [process.env.TOOLHOST_PLUGIN_DIRS, process.env.TOOLHOST_TEST_PLUGIN_DIRS]
      .flatMap((v) => (v ?? '').split(':'))
      .filter(Boolean);
    this.n = 0;
  }

  so(name) {
    for (const dir of this.from) if (readdirSync(dir).includes(`${name}.so`)) return join(dir, `${name}.so`);
    throw new Error(`${name}.so is in none of ${this.from.join(', ')} (TOOLHOST_PLUGIN_DIRS, TOOLHOST_TEST_PLUGIN_DIRS)`);
  }

  pluginDir(names) {
    const dir = join(this.tmp, `plugins${this.n++}`);
    mkdirSync(dir, { mode: 0o700 });
    for (const name of names) copyFileSync(this.so(name), join(dir, `${name}.so`));
    return dir;
  }

  // As the README says to install into a watched directory: a new file
  // under a temporary name, renamed into place.
  install(dir, name) {
    const tmp = join(dir, `.${name}.partial`);
    copyFileSync(this.so(name), tmp);
    renameSync(tmp, join(dir, `${name}.so`));
  }

  // ROOT/a.txt, b.bin, the ENCODED names, sub/c.md, sub/inside -> ../a.txt
  // (stays inside), sub/escape -> an absolute path outside,
  // sub/up -> ../../outside/...
  filesRoot() {
    const root = join(this.tmp, 'root');
    const outside = join(this.tmp, 'outside');
    mkdirSync(join(root, 'sub'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'must never be served\n');
    writeFileSync(join(root, 'a.txt'), A_TXT);
    writeFileSync(join(root, 'b.bin'), B_BIN);
    writeFileSync(join(root, 'sub', 'c.md'), C_MD);
    for (const [name, , content] of ENCODED) writeFileSync(join(root, name), content);
    symlinkSync('../a.txt', join(root, 'sub', 'inside'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'sub', 'escape'));
    symlinkSync('../../outside/secret.txt', join(root, 'sub', 'up'));
    return root;
  }

  remove(dir, name) {
    unlinkSync(join(dir, `${name}.so`));
  }

  cleanup() {
    rmSync(this.tmp, { recursive: true, force: true });
  }
}

// Notifications of one method, and a way to wait for the one wanted.
class Inbox {
  constructor() {
    this.got = [];
    this.waiters = [];
  }

  push(msg) {
    this.got.push(msg);
    const ready = this.waiters.filter(({ pred }) => pred(this.got));
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const { resolve } of ready) resolve();
  }

  // Resolves when PRED(all received) holds; rejects after WAIT_MS.
  waitFor(pred, what) {
    if (pred(this.got)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${WAIT_MS / 1000} s`)), WAIT_MS);
      this.waiters.push({ pred, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}

// The requests of METHOD sent after wire[FROM], each with its response.
function exchanges(wire, from, method) {
  const out = wire.slice(from).filter(({ dir, msg }) => dir === 'out' && msg.method === method && msg.id !== undefined);
  return out.map(({ msg: request }) => ({
    request,
    response: wire.find(({ dir, msg }) => dir === 'in' && msg.id === request.id && msg.method === undefined)?.msg
  }));
}

// A subscription id is the listen request's JSON-RPC id, in _meta.
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

// Answers an elicitation with one value per property asked for; records
// each question. Scripts install answer() as their elicitation handler.
export function elicitor() {
  const values = { context: 'from the interop client', topic: 'interop', confirm: true, name: 'Ada' };
  const asked = [];
  return {
    asked,
    answer(params) {
      asked.push(params.message);
      const keys = Object.keys(params.requestedSchema?.properties ?? {});
      return { action: 'accept', content: Object.fromEntries(keys.map((k) => [k, values[k]])) };
    }
  };
}

// Runs FN (a client call that must fail) and checks both what the SDK threw
// and the raw JSON-RPC error of the request of METHOD it sent.
async function expectError(t, name, c, method, fn, want) {
  const from = c.wire.length;
  let err;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  // A client may map a legacy not-found code (c.notFoundCode, see
  // primitives-v2.mjs); the wire must still carry the revision's own.
  const sdkCode = want.data?.uri !== undefined ? (c.notFoundCode ?? want.code) : want.code;
  t.eq(`${name}: the SDK rejects with the code`, err?.code, sdkCode);
  t.eq(`${name}: error on the wire`, exchanges(c.wire, from, method).at(-1)?.response?.error, want);
}

// Lists everything with the client's LIST (c.listAll) and checks on the wire
// that the pages were walked through the cursors the server handed out.
async function walk(t, name, c, method, list, key, id) {
  const from = c.wire.length;
  const items = await c.listAll(list);
  const pages = exchanges(c.wire, from, method);
  t.ok(`${name}: more than one page`, pages.length > 1, `${pages.length} page(s)`);
  t.eq(`${name}: the first page has no cursor`, pages[0]?.request.params?.cursor, undefined);
  t.ok(
    `${name}: each page asked for with the previous page's nextCursor`,
    pages.slice(1).every((p, i) => p.request.params?.cursor === pages[i].response?.result?.nextCursor &&
                                   typeof p.request.params.cursor === 'string'),
    inspect(pages.map((p) => [p.request.params?.cursor, p.response?.result?.nextCursor]))
  );
  t.eq(`${name}: the last page has no nextCursor`, pages.at(-1)?.response?.result?.nextCursor, undefined);
  t.ok(`${name}: pages hold at most --page-size items`,
       pages.every((p) => p.response?.result?.[key]?.length <= PAGE && p.response.result[key].length > 0),
       inspect(pages.map((p) => p.response?.result?.[key]?.length)));
  // By identity: an SDK may drop members its schema lacks (1.x: an
  // argument's title).
  t.eq(`${name}: the client's list is the pages' items, in order`, items.map((i) => i[id]),
       pages.flatMap((p) => p.response?.result?.[key] ?? []).map((i) => i[id]));
  return items;
}

const sorted = (a) => [...a].sort();
const byKey = (items, key) => new Map(items.map((i) => [i[key], i]));

async function resources(t, label, c, fx) {
  const p = (s) => `${label}: ${s}`;
  const era = c.era;

  await t.guard(p('resources/list'), async () => {
    const items = await walk(t, p('resources/list'), c, 'resources/list', 'listResources', 'resources', 'uri');
    const want = ['test://static-text', 'test://static-binary', 'test://watched-resource', 'file:///a.txt',
      'file:///b.bin', ...ENCODED.map(([, uri]) => uri), 'mem://hello', 'mem://blob', 'mem://n/1', 'mem://n/2',
      'mem://n/3'];
    t.eq(p('resources listed, once each'), sorted(items.map((r) => r.uri)), sorted(want));
    const by = byKey(items, 'uri');
    t.eq(p('static-text descriptor'), by.get('test://static-text'), {
      uri: 'test://static-text', name: 'static-text', title: 'Static Text Resource',
      description: 'A static text resource for testing', mimeType: 'text/plain'
    });
    t.eq(p('files lists a.txt with its size and type'), by.get('file:///a.txt'),
         { uri: 'file:///a.txt', name: 'a.txt', mimeType: 'text/plain', size: Buffer.byteLength(A_TXT) });
    t.eq(p('files lists an encoded name under its own name'), by.get(ENCODED[0][1])?.name, ENCODED[0][0]);
    t.eq(p('mem://hello annotations and size'),
         [by.get('mem://hello')?.annotations, by.get('mem://hello')?.size],
         [{ audience: ['user'], priority: 0.5 }, 17]);
  });

  await t.guard(p('resources/templates/list'), async () => {
    const items = await walk(t, p('resources/templates/list'), c, 'resources/templates/list', 'listResourceTemplates',
                             'resourceTemplates', 'uriTemplate');
    t.eq(p('templates listed'), sorted(items.map((r) => r.uriTemplate)),
         sorted(['test://template/{id}/data', 'file:///{path}', 'mem://items/{id}']));
    t.eq(p('files template name'), byKey(items, 'uriTemplate').get('file:///{path}')?.name, 'files');
  });

  // Reads: [uri, the contents wanted].
  const reads = [
    ['test://static-text', [{ uri: 'test://static-text', mimeType: 'text/plain',
      text: 'This is the content of the static text resource.' }]],
    ['test://static-binary', [{ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG }]],
    ['test://template/a%20b/data', [{ uri: 'test://template/a%20b/data', mimeType: 'application/json',
      text: JSON.stringify({ id: 'a b', templateTest: true, data: 'Data for ID: a b' }) }]],
    ['file:///a.txt', [{ uri: 'file:///a.txt', mimeType: 'text/plain', text: A_TXT }]],
    ['file:///b.bin', [{ uri: 'file:///b.bin', mimeType: 'application/octet-stream', blob: B_BIN.toString('base64') }]],
    ['file:///sub/c.md', [{ uri: 'file:///sub/c.md', mimeType: 'text/markdown', text: C_MD }]],
    ...ENCODED.map(([, uri, text]) => [uri, [{ uri, mimeType: 'text/plain', text }]]),
    // A link that stays inside the root is followed.
    ['file:///sub/inside', [{ uri: 'file:///sub/inside', mimeType: 'text/plain', text: A_TXT }]],
    ['mem://hello', [{ uri: 'mem://hello', mimeType: 'text/plain', text: 'hello from resfix' }]],
    ['mem://items/x1', [{ uri: 'mem://items/x1', mimeType: 'text/plain', text: 'item x1' },
      { uri: 'mem://items/meta', mimeType: 'application/json', text: '{"part":2}' }]]
  ];
  for (const [uri, want] of reads)
    await t.guard(p(`read ${uri}`), async () => {
      const result = await c.client.readResource({ uri });
      t.eq(p(`read ${uri}`), result.contents, want);
    });

  // A missing resource: -32002 before 2026-07-28, -32602 from then on
  // (SEP-2164), "Resource not found" with the URI in data either way.
  const notFound = era === 'modern' ? -32602 : -32002;
  for (const uri of ['file:///no-such-file.txt', 'mem://items/missing', 'other://not-served'])
    await t.guard(p(`missing ${uri}`), () =>
      expectError(t, p(`missing ${uri}`), c, 'resources/read', () => c.client.readResource({ uri }),
                  { code: notFound, message: 'Resource not found', data: { uri } }));

  // Ways out of the served root, each refused with -32602 and why.
  const escapes = [
    ['file:///../outside/secret.txt', "path '../outside/secret.txt' refused: '..' (path traversal) is not allowed"],
    ['file:///%2e%2e/outside/secret.txt', "path '../outside/secret.txt' refused: '..' (path traversal) is not allowed"],
    ['file:///sub/../../outside/secret.txt',
      "path 'sub/../../outside/secret.txt' refused: '..' (path traversal) is not allowed"],
    ['file:////etc/passwd', "absolute path '/etc/passwd' refused: paths are relative to the served directory"],
    ['file:///sub/escape',
      "path 'sub/escape' refused: it leads outside the served directory (a symbolic link or '..' that leaves it)"],
    ['file:///sub/up',
      "path 'sub/up' refused: it leads outside the served directory (a symbolic link or '..' that leaves it)"],
    ['mem://items/refused', "item 'refused' is off limits"]
  ];
  // toolhost words every -32602 "Invalid params: WHY".
  for (const [uri, message] of escapes)
    await t.guard(p(`refused ${uri}`), () =>
      expectError(t, p(`refused ${uri}`), c, 'resources/read', () => c.client.readResource({ uri }),
                  { code: -32602, message: `Invalid params: ${message}` }));

  // A 4 MiB text arrives whole over the client's stdio framing.
  await t.guard(p('read a 4 MiB resource'), async () => {
    const [part] = (await c.client.readResource({ uri: 'mem://items/huge' })).contents;
    t.ok(p('4 MiB of text read'), part?.text?.length === 4 << 20 && /^x+$/.test(part.text),
         `${part?.text?.length} characters`);
  });

  // A read that fails is -32603 naming the resource; one that crashes its
  // worker too (process isolation only: in-process it ends the host), and
  // the host serves on.
  const failures = [['mem://items/broken', 'the item store is down']];
  if (c.isolation === 'process') failures.push(['mem://items/crash', "resource 'mem://items/{id}' crashed: signal 6 (SIGABRT)"]);
  for (const [uri, why] of failures)
    await t.guard(p(`failing read ${uri}`), () =>
      expectError(t, p(`failing read ${uri}`), c, 'resources/read', () => c.client.readResource({ uri }),
                  { code: -32603, message: `Internal error: reading resource 'items' failed: ${why}` }));
  await t.guard(p('served after the failures'), async () =>
    t.eq(p('a read after the failures'), (await c.client.readResource({ uri: 'mem://items/again' })).contents[0]?.text,
         'item again'));

  // Updates: subscribe (legacy resources/subscribe, modern
  // subscriptions/listen), have resfix announce an update, and see it
  // arrive at the client's handler; after unsubscribing, none for that URI.
  await t.guard(p('resource updates'), async () => {
    const inbox = new Inbox();
    c.onNotification('notifications/resources/updated', (n) => inbox.push(n));
    const touch = async (uri) =>
      t.eq(p(`resfix announces ${uri}`), (await c.client.callTool({ name: 'resfix', arguments: { uri } })).content,
           [text('touched')]);
    const subscribe = async (uri) => {
      if (era === 'legacy') {
        t.eq(p(`subscribe ${uri}`), Object.keys(await c.client.subscribeResource({ uri })).filter((k) => k !== '_meta'), []);
        return { id: undefined, close: () => c.client.unsubscribeResource({ uri }) };
      }
      const from = c.wire.length;
      const sub = await c.client.listen({ resourceSubscriptions: [uri] });
      t.eq(p(`listen ${uri}: honoured`), sub.honoredFilter.resourceSubscriptions, [uri]);
      const id = exchanges(c.wire, from, 'subscriptions/listen')[0]?.request.id;
      return { id, close: () => sub.close(), closed: sub.closed };
    };

    const hello = await subscribe('mem://hello');
    await touch('mem://hello');
    await inbox.waitFor((got) => got.length >= 1, 'notifications/resources/updated');
    t.eq(p('update of mem://hello received'), inbox.got[0]?.params?.uri, 'mem://hello');
    if (era === 'modern')
      t.ok(p('update carries the subscription id'),
           hello.id !== undefined && inbox.got[0]?.params?._meta?.[SUBSCRIPTION_ID] === hello.id,
           `${inspect(inbox.got[0]?.params?._meta)} vs ${hello.id}`);
    await hello.close();
    if (hello.closed) t.eq(p('listen stream closed by the client'), await hello.closed, 'local');

    // Notifications leave in order on one stream: had mem://hello still
    // been subscribed, its update would arrive before mem://blob's.
    const blob = await subscribe('mem://blob');
    await touch('mem://hello');
    await touch('mem://blob');
    await inbox.waitFor((got) => got.some((n) => n.params?.uri === 'mem://blob'), 'update of mem://blob');
    t.eq(p('after unsubscribing only the subscribed URI is announced'),
         inbox.got.slice(1).map((n) => n.params?.uri), ['mem://blob']);
    await blob.close();
  });
}

async function prompts(t, label, c, asked) {
  const p = (s) => `${label}: ${s}`;

  await t.guard(p('prompts/list'), async () => {
    const items = await walk(t, p('prompts/list'), c, 'prompts/list', 'listPrompts', 'prompts', 'name');
    t.eq(p('prompts listed, once each'), sorted(items.map((x) => x.name)), sorted([
      'test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource',
      'test_prompt_with_image', 'test_input_required_result_prompt', 'greet', 'ask', 'crash', 'bad_utf8',
      'picky', 'code_review']));
    const review = byKey(items, 'name').get('code_review');
    t.eq(p('code_review title'), review?.title, 'Request Code Review');
    t.eq(p('code_review arguments'), review?.arguments?.map((a) => [a.name, a.required ?? false]),
         [['code', true], ['language', false], ['focus', false]]);
    t.eq(p('greet icons'), byKey(items, 'name').get('greet')?.icons,
         [{ src: 'https://example.com/i.png', mimeType: 'image/png', sizes: ['48x48'] }]);
  });

  const code = 'int main(void) { return 0; }';
  const gets = [
    [{ name: 'code_review', arguments: { code, language: 'c' } }, [
      user(text('Please review this code, written in c. Focus on correctness, error handling and readability. ' +
                'List each problem with the line it is on, why it is one, and a fix; end with what is good ' +
                `about it.\n\n${code}`)),
      { role: 'assistant', content: text('I will list the problems first, most serious first, then what works well.') }
    ]],
    [{ name: 'test_simple_prompt' }, [user(text('This is a simple prompt for testing.'))]],
    [{ name: 'test_prompt_with_arguments', arguments: { arg1: 'héllo', arg2: '"two"' } },
      [user(text('Prompt with arguments: arg1=\'héllo\', arg2=\'"two"\''))]],
    [{ name: 'test_prompt_with_image' },
      [user({ type: 'image', data: PNG, mimeType: 'image/png' }), user(text('Please analyze the image above.'))]],
    [{ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://embedded' } }, [
      user({ type: 'resource', resource: { uri: 'test://embedded', mimeType: 'text/plain',
        text: 'Embedded resource content for testing.' } }),
      user(text('Please process the embedded resource above.'))
    ]],
    [{ name: 'greet', arguments: { who: 'Ann', tone: 'verse' } }, [
      user(text('Greet Ann in verse')),
      { role: 'assistant', content: text('Hello!') },
      user({ type: 'resource', resource: { uri: 'mem://note', mimeType: 'text/plain', text: 'a note' } })
    ]],
    // Invalid UTF-8 from the plugin arrives repaired.
    [{ name: 'bad_utf8' }, [user(text('caf\ufffd \ufffd'))]],
    // Asks the client first: an elicitation request (legacy) or an
    // input_required result the SDK fulfils and retries (modern).
    [{ name: 'test_input_required_result_prompt' }, [user(text('Prompt with context: from the interop client'))]],
    [{ name: 'ask' }, [user(text('Topic: interop'))]]
  ];
  for (const [params, want] of gets)
    await t.guard(p(`get ${params.name}`), async () => {
      const result = await c.client.getPrompt(params);
      t.eq(p(`get ${params.name} messages`), result.messages, want);
    });
  t.eq(p('the client was asked both questions'), asked,
       ['What context should the prompt use?', 'Which topic?']);

  const refusals = [
    [{ name: 'code_review', arguments: { language: 'c' } }, "missing required argument 'code' of prompt 'code_review'"],
    [{ name: 'code_review', arguments: { code, flavour: 'x' } }, "prompt 'code_review' has no argument 'flavour'"],
    [{ name: 'no_such_prompt' }, "unknown prompt 'no_such_prompt'"],
    [{ name: 'picky', arguments: { n: '7' } }, "n must be 42, not '7'"]
  ];
  for (const [params, message] of refusals)
    await t.guard(p(`refused get ${params.name}`), () =>
      expectError(t, p(`refused get ${params.name} ${JSON.stringify(params.arguments ?? {})}`), c, 'prompts/get',
                  () => c.client.getPrompt(params), { code: -32602, message: `Invalid params: ${message}` }));

  // A get or completion that crashes its worker (process isolation only):
  // -32603 naming what crashed; the host serves on (the gets below).
  if (c.isolation === 'process') {
    await t.guard(p('crashing get'), () =>
      expectError(t, p('crashing get'), c, 'prompts/get', () => c.client.getPrompt({ name: 'crash' }), {
        code: -32603,
        message: "Internal error: getting prompt 'crash' failed: prompt 'crash' crashed: signal 6 (SIGABRT)"
      }));
    await t.guard(p('crashing completion'), () =>
      expectError(t, p('crashing completion'), c, 'completion/complete',
                  () => c.client.complete({ ref: { type: 'ref/prompt', name: 'crash' }, argument: { name: 'how', value: '' } }),
                  { code: -32603,
                    message: "Internal error: completing 'how' failed: completion of 'crash' crashed: signal 6 (SIGABRT)" }));
  }

  // Completion of prompt arguments and of a template variable.
  const completions = [
    [{ ref: { type: 'ref/prompt', name: 'code_review' }, argument: { name: 'language', value: 'ja' } },
      { values: ['java', 'javascript'], total: 2, hasMore: false }],
    [{ ref: { type: 'ref/prompt', name: 'code_review' }, argument: { name: 'language', value: 'PY' } },
      { values: ['python'], total: 1, hasMore: false }],
    [{ ref: { type: 'ref/prompt', name: 'code_review' }, argument: { name: 'focus', value: 'sp' } },
      { values: [], total: 0, hasMore: false }],
    [{ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'par' } },
      { values: ['paris', 'park', 'party'], total: 3, hasMore: false }],
    [{ ref: { type: 'ref/resource', uri: 'mem://items/{id}' }, argument: { name: 'id', value: 'ab' } },
      { values: ['ab1'], total: 1, hasMore: false }],
    // 151 values (the context echoed, then 150): 100 sent, hasMore.
    [{ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'tone', value: 'v' },
       context: { arguments: { who: 'Ann' } } },
      { values: ['who=Ann', ...Array.from({ length: 99 }, (_, i) => `tone-v-${i}`)], total: 151, hasMore: true }]
  ];
  for (const [params, want] of completions)
    await t.guard(p(`complete ${params.argument.name}`), async () => {
      const result = await c.client.complete(params);
      t.eq(p(`complete ${params.ref.name ?? params.ref.uri} ${params.argument.name}=${params.argument.value}`),
           result.completion, want);
    });
  await t.guard(p('complete an unknown prompt'), () =>
    expectError(t, p('complete an unknown prompt'), c, 'completion/complete',
                () => c.client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'a', value: '' } }),
                { code: -32602, message: "Invalid params: unknown prompt 'nope'" }));
}

// A hot reload that adds, then removes, plugins with resources and
// prompts: each change reaches the client's list_changed handler (legacy:
// sent to the initialized session; modern: on the listen stream that asked
// for it), and the lists show the change. SIGHUP: the files change
// unwatched, then a signal rescans; otherwise --watch sees them.
async function reload(t, label, c, fx, dir, sighup) {
  // process.kill, not c.proc.kill: that would mark the child "killed",
  // which closeAndCheckExit takes for the SDK having had to signal it.
  const rescan = () => sighup && process.kill(c.proc.pid, 'SIGHUP');
  const p = (s) => `${label}: ${s}`;
  const res = new Inbox();
  const pro = new Inbox();
  c.onNotification('notifications/resources/list_changed', (n) => res.push(n));
  c.onNotification('notifications/prompts/list_changed', (n) => pro.push(n));
  let sub;
  let subId;
  if (c.era === 'modern') {
    const from = c.wire.length;
    sub = await c.client.listen({ resourcesListChanged: true, promptsListChanged: true });
    subId = exchanges(c.wire, from, 'subscriptions/listen')[0]?.request.id;
    t.eq(p('listen for list changes: honoured'), sub.honoredFilter, { resourcesListChanged: true, promptsListChanged: true });
  }
  const uris = async () => sorted((await c.listAll('listResources')).map((r) => r.uri));
  const names = async () => sorted((await c.listAll('listPrompts')).map((x) => x.name));
  t.eq(p('resources before the reload'), await uris(), []);
  t.eq(p('prompts before the reload'), await names(), ['code_review']);

  fx.install(dir, 'conformance_resources');
  fx.install(dir, 'conformance_prompts');
  rescan();
  await res.waitFor((got) => got.length >= 1, 'notifications/resources/list_changed');
  await pro.waitFor((got) => got.length >= 1, 'notifications/prompts/list_changed');
  t.eq(p('resources after adding a plugin'), await uris(),
       sorted(['test://static-text', 'test://static-binary', 'test://watched-resource']));
  t.eq(p('prompts after adding a plugin'), await names(), sorted(['code_review', 'test_simple_prompt',
    'test_prompt_with_arguments', 'test_prompt_with_embedded_resource', 'test_prompt_with_image',
    'test_input_required_result_prompt']));
  t.eq(p('a new resource is read'), (await c.client.readResource({ uri: 'test://static-text' })).contents[0]?.text,
       'This is the content of the static text resource.');

  const resSeen = res.got.length;
  fx.remove(dir, 'conformance_prompts');
  rescan();
  await pro.waitFor((got) => got.length >= 2, 'a second notifications/prompts/list_changed');
  t.eq(p('prompts after removing a plugin'), await names(), ['code_review']);
  t.eq(p('removing prompts alone does not announce a resource change'), res.got.length, resSeen);
  await expectError(t, p('a removed prompt is unknown'), c, 'prompts/get',
                    () => c.client.getPrompt({ name: 'test_simple_prompt' }),
                    { code: -32602, message: "Invalid params: unknown prompt 'test_simple_prompt'" });
  if (sub) {
    t.ok(p('list changes carry the subscription id'),
         subId !== undefined && [...res.got, ...pro.got].every((n) => n.params?._meta?.[SUBSCRIPTION_ID] === subId),
         inspect([...res.got, ...pro.got].map((n) => n.params), { depth: 4 }));
    await sub.close();
  }
}

// The same reload seen through the SDK's own list_changed handling
// (ClientOptions.listChanged): told of a change, the SDK lists again and
// hands the new list to onChanged (LISTS: an Inbox per list, fed by it). A
// modern client opens the subscriptions/listen stream for it by itself.
async function reloadSdk(t, label, c, fx, dir, lists) {
  const p = (s) => `${label}: ${s}`;
  if (c.era === 'modern')
    t.eq(p('the SDK listens for the list changes it handles'), c.client.autoOpenedSubscription?.honoredFilter,
         { resourcesListChanged: true, promptsListChanged: true });
  const has = (key, value) => (got) => got.some(({ items }) => items?.some((i) => i[key] === value));
  fx.install(dir, 'conformance_resources');
  fx.install(dir, 'conformance_prompts');
  await lists.resources.waitFor(has('uri', 'test://static-text'), "the SDK's refreshed resource list");
  await lists.prompts.waitFor(has('name', 'test_simple_prompt'), "the SDK's refreshed prompt list");
  t.eq(p('the SDK refreshed the resources'), sorted(lists.resources.got.at(-1).items.map((r) => r.uri)),
       sorted(['test://static-text', 'test://static-binary', 'test://watched-resource']));
  t.eq(p('the SDK refreshed the prompts'), sorted(lists.prompts.got.at(-1).items.map((x) => x.name)), sorted([
    'code_review', 'test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource',
    'test_prompt_with_image', 'test_input_required_result_prompt']));
  fx.remove(dir, 'conformance_prompts');
  await lists.prompts.waitFor((got) => got.at(-1).items?.length === 1, 'the prompt list refreshed after a removal');
  t.eq(p('the SDK refreshed the prompts after a removal'), lists.prompts.got.at(-1).items.map((x) => x.name),
       ['code_review']);
  t.eq(p('no refresh failed'), [...lists.resources.got, ...lists.prompts.got].filter(({ error }) => error).map(String),
       []);
}

// The sessions, each on its own toolhost with its own plugin set, in both
// isolation modes. connect({dirs, args, env, listChanged}) starts toolhost
// with serverParams() of the first three, makes a client with
// ClientOptions.listChanged if given, and resolves with
//   client, wire (tapTransport), errors (collectErrors), proc, era,
//   onNotification(method, fn)  fn(notification) for each of METHOD,
//   listAll(verb)               every item of client[verb] ('listResources',
//                               'listResourceTemplates', 'listPrompts'),
//                               following nextCursor the SDK's way,
//   asked                       the elicitor() questions of this client,
//   notFoundCode                (optional) the code the SDK gives a
//                               missing resource, if not the wire's.
export async function runPrimitives(t, label, connect, modes = ['process', 'none']) {
  const fx = new Fixtures();
  try {
    const root = fx.filesRoot();
    for (const mode of modes) {
      const isolation = `--isolation=${mode}`;
      // name, plugins served, toolhost arguments, checks, and whether the
      // client handles list changes itself (ClientOptions.listChanged).
      const sessions = [
        ['resources', ['conformance_resources', 'files', 'resfix'], [`--page-size=${PAGE}`],
          (l, c) => resources(t, l, c, fx)],
        ['prompts', ['conformance_prompts', 'prompts', 'promptfix'], [`--page-size=${PAGE}`],
          (l, c) => prompts(t, l, c, c.asked)],
        ['reload --watch', ['prompts'], ['--watch'], (l, c, dir) => reload(t, l, c, fx, dir, false)],
        ['reload SIGHUP', ['prompts'], [], (l, c, dir) => reload(t, l, c, fx, dir, true)],
        ['reload, SDK listChanged', ['prompts'], ['--watch'], (l, c, dir, lists) => reloadSdk(t, l, c, fx, dir, lists),
          true]
      ];
      for (const [name, plugins, args, run, sdkLists] of sessions) {
        const l = `${label} ${mode} ${name}`;
        const lists = { resources: new Inbox(), prompts: new Inbox() };
        const onChanged = (inbox) => ({ onChanged: (error, items) => inbox.push({ error, items }) });
        let c;
        try {
          const dir = fx.pluginDir(plugins);
          c = await connect({
            dirs: [dir],
            args: [isolation, ...args],
            env: { TOOLHOST_FILES_ROOT: root },
            listChanged: sdkLists ? { resources: onChanged(lists.resources), prompts: onChanged(lists.prompts) } : undefined
          });
          c.isolation = mode;
          await run(l, c, dir, lists);
          t.eq(`${l}: no client errors`, c.errors.map(String), []);
          await closeAndCheckExit(t, l, c.client, c.proc);
        } catch (err) {
          t.ok(`${l}: session`, false, err?.stack ?? err);
        } finally {
          await c?.client.close().catch(() => {});
        }
      }
    }
  } finally {
    fx.cleanup();
  }
}
