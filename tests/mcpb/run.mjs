// SPDX-License-Identifier: MIT
// tests/mcpb/run.mjs DIR CLI: runs the unpacked bundle in DIR as an MCPB
// client would (the command and arguments from the CLI's own
// getMcpConfigForManifest, no setting filled in) with an EMPTY environment,
// then reads /proc/PID/maps of the host and its workers to show that every
// library mapped besides glibc's is the bundle's copy; once over stdio
// (initialize, tools/list, tools/call echo) and once with --http on a Unix
// socket and a token file, which makes the host dlopen libmicrohttpd and
// libcrypto.
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import readline from "node:readline";
import { pathToFileURL } from "node:url";

const [dirArg, cliArg] = process.argv.slice(2);
if (!dirArg || !cliArg) {
  console.error("usage: run.mjs UNPACKED-BUNDLE-DIR MCPB-CLI");
  process.exit(2);
}
const dir = fs.realpathSync(dirArg);
const configJs = path.join(path.dirname(cliArg), "..", "shared", "config.js");
const { getMcpConfigForManifest } = await import(pathToFileURL(configJs).href);
const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
const failures = [];
const fail = (msg) => {
  failures.push(msg);
  console.error(`FAIL: ${msg}`);
};

const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: dir,
  systemDirs: { HOME: "/nonexistent", DESKTOP: "/nonexistent", DOCUMENTS: "/nonexistent", DOWNLOADS: "/nonexistent" },
  userConfig: {},
  pathSeparator: "/",
});
if (!config) throw new Error("the manifest gives no mcp_config without settings");
console.log(`command: ${config.command} ${config.args.join(" ")}`);

// glibc stays the system's (scripts/mcpb.sh does not bundle it).
const glibc = /^(ld-linux[^/]*|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libmvec|libnss_[a-z]+|libthread_db|libBrokenLocale)\.so(\.|$)/;

function children(pid) {
  const out = [];
  let tasks = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tasks) {
    let text = "";
    try {
      text = fs.readFileSync(`/proc/${pid}/task/${t}/children`, "utf8");
    } catch {
      continue;
    }
    for (const c of text.trim().split(/\s+/).filter(Boolean)) out.push(Number(c), ...children(Number(c)));
  }
  return out;
}

// The shared objects PID maps: path -> true when it lies in the bundle.
function mappedLibraries(pid) {
  const libs = new Map();
  for (const line of fs.readFileSync(`/proc/${pid}/maps`, "utf8").split("\n")) {
    const m = line.match(/^\S+ \S+ \S+ \S+ \S+\s+(\/.*)$/);
    if (!m) continue;
    const file = m[1].replace(/ \(deleted\)$/, "");
    if (!/\.so(\.|$)/.test(path.basename(file))) continue;
    libs.set(file, file.startsWith(dir + "/"));
  }
  return libs;
}

// Checks every process of the tree at PID; MUST names sonames (prefixes)
// that have to be mapped from the bundle in the host.
function checkMaps(label, pid, must) {
  const pids = [pid, ...children(pid)];
  let bundled = 0;
  for (const p of pids) {
    let libs;
    try {
      libs = mappedLibraries(p);
    } catch (e) {
      if (p === pid) fail(`${label}: cannot read /proc/${p}/maps: ${e.message}`);
      continue;
    }
    const exe = fs.readlinkSync(`/proc/${p}/exe`);
    if (exe !== path.join(dir, "bin", "toolhost")) fail(`${label}: process ${p} runs ${exe}, not the bundle's toolhost`);
    for (const [file, inBundle] of libs) {
      if (inBundle) bundled++;
      else if (!glibc.test(path.basename(file))) fail(`${label}: process ${p} maps ${file}, from outside the bundle`);
    }
    if (p === pid) {
      for (const prefix of must) {
        const hit = [...libs].find(([file, inBundle]) => inBundle && path.basename(file).startsWith(prefix));
        if (!hit) fail(`${label}: the host has no ${prefix}* mapped from the bundle`);
      }
    }
    const names = [...libs].map(([file, inBundle]) => (inBundle ? "bundle:" : "system:") + path.basename(file));
    console.log(`${label}: pid ${p}${p === pid ? " (host)" : ""}: ${names.sort().join(" ")}`);
  }
  console.log(`${label}: ${pids.length} process(es), ${bundled} mapping(s) of bundled libraries`);
  return pids.length;
}

function start(extra) {
  // env: {} is `env -i`: no PATH, no HOME, no LD_LIBRARY_PATH.
  const child = spawn(config.command, [...config.args, ...extra], { env: {}, stdio: ["pipe", "pipe", "pipe"] });
  child.stderr.on("data", (d) => process.stderr.write(`[toolhost] ${d}`));
  child.exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return child;
}

async function overStdio() {
  const child = start([]);
  const pending = new Map();
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    const msg = JSON.parse(line);
    if (msg.id !== undefined && pending.has(msg.id)) {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    }
  });
  let next = 1;
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, resolve);
      child.exited.then((st) => reject(new Error(`toolhost exited (${JSON.stringify(st)}) before answering ${method}`)));
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  const init = await request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "mcpb-bundle-test", version: "1" },
  });
  if (!init.result?.serverInfo) fail(`initialize: ${JSON.stringify(init)}`);
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  const list = await request("tools/list", {});
  const names = (list.result?.tools ?? []).map((t) => t.name);
  console.log(`stdio: tools/list: ${names.join(" ")}`);
  if (!names.includes("echo")) fail(`tools/list has no echo: ${JSON.stringify(list)}`);
  const text = "hello from the unpacked bundle";
  const call = await request("tools/call", { name: "echo", arguments: { text } });
  const got = call.result?.content?.[0]?.text;
  if (call.result?.isError || got !== text) fail(`tools/call echo: ${JSON.stringify(call)}`);
  else console.log(`stdio: tools/call echo: ${got}`);
  // After the call: its worker runs, and nothing opened HTTP or crypto.
  const procs = checkMaps("stdio", child.pid, ["libjson-c.so", "libffi.so", "libpcre2-8.so"]);
  if (procs < 2) fail("stdio: no worker process ran the echo call");
  child.stdin.end();
  const st = await child.exited;
  if (st.code !== 0) fail(`stdio: toolhost exited with ${JSON.stringify(st)}`);
}

function post(socketPath, token, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath,
        path: "/mcp",
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
      },
      (res) => {
        let data = "";
        res.on("data", (d) => (data += d));
        res.on("end", () => resolve({ status: res.statusCode, data }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

async function overHttp() {
  const scratch = fs.mkdtempSync(path.join(path.dirname(dir), "http-"));
  const sock = path.join(scratch, "mcp.sock");
  const tokens = path.join(scratch, "tokens");
  const token = "mcpb-bundle-test-token";
  fs.writeFileSync(tokens, `${token}\n`, { mode: 0o600 });
  const child = start([`--http=unix:${sock}`, `--auth-token-file=${tokens}`]);
  let exited = null;
  child.exited.then((st) => (exited = st));
  // Waits for the listener (not a timing assertion: the socket appears
  // once the host serves, whatever the machine's speed).
  while (!fs.existsSync(sock)) {
    if (exited) throw new Error(`toolhost --http exited: ${JSON.stringify(exited)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const res = await post(sock, token, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "mcpb-bundle-test", version: "1" } },
  });
  if (res.status !== 200 || !res.data.includes("serverInfo")) fail(`http: initialize answered ${res.status}: ${res.data}`);
  else console.log("http: initialize over the Unix socket: 200");
  checkMaps("http", child.pid, ["libmicrohttpd.so", "libcrypto.so", "libjson-c.so"]);
  child.kill("SIGTERM");
  await child.exited;
  fs.rmSync(scratch, { recursive: true, force: true });
}

await overStdio();
await overHttp();
if (failures.length) {
  console.error(`${failures.length} failure(s)`);
  process.exit(1);
}
console.log("PASS: the unpacked bundle serves with an empty environment from its own libraries");
