/**
 * The `agent-tools` binary, run as a child process the way a user runs it (no TypeScript loader): dist/cli/main.js,
 * which the global setup (test/setup/bundles.ts) rebuilds from src/ whenever it is older than its sources. The tests
 * are independent (each has its own workspace and processes), so the file runs them concurrently.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { McpServer as SdkMcpServer } from "@modelcontextprotocol/server"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { widthOf } from "../src/cli/render.js"
import type { Ran } from "./helpers.js"
import { runNode } from "./helpers.js"
import { root, serverEverything } from "./interop/peers.js"
import { authorizationServer, protectedServer } from "./oauthPeers.js"

const bin = path.join(root, "dist/cli/main.js")

/** Runs the binary without a terminal (stdin is a pipe closed after `input`). */
const runCli = (
  args: ReadonlyArray<string>,
  options: { readonly input?: string; readonly cwd?: string; readonly env?: Record<string, string> } = {}
) => runNode(bin, args, { ...options, cwd: options.cwd ?? root })

const workspace = (files: Record<string, string>): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-test-"))
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), content)
  }
  return dir
}

const quote = (arg: string) => `'${arg.replace(/'/g, "'\\''")}'`

/** The binary's command line for a shell. */
const commandLine = (args: ReadonlyArray<string>) => [process.execPath, bin, ...args].map(quote).join(" ")

/**
 * Runs the binary on a real terminal (a pseudo-terminal from util-linux's script(1)) sized `columns` x `rows`;
 * gives everything written to it, escape codes included (script's own first and last lines taken off).
 */
const onTerminal = (
  args: ReadonlyArray<string>,
  options: { readonly columns?: number; readonly rows?: number; readonly env?: Record<string, string> } = {}
) =>
  new Promise<Ran>((resolve, reject) => {
    const size = `stty cols ${options.columns ?? 80} rows ${options.rows ?? 24}`
    const child = ChildProcess.spawn("script", ["-qfec", `${size}; ${commandLine(args)}`, "/dev/null"], {
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stdin.on("error", () => {})
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr: "" }))
  })

// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[[0-9;]*m/
// eslint-disable-next-line no-control-regex
const UP = /\x1b\[(\d+)A/g
// eslint-disable-next-line no-control-regex
const CSI = /\x1b\[[0-9;?]*[A-Za-z]/g

/** The lines a terminal was given, escape codes and carriage returns taken out. */
const printedLines = (raw: string): Array<string> => raw.replace(CSI, "").replace(/\r/g, "").split("\n")

const hasTmux = ChildProcess.spawnSync("tmux", ["-V"]).status === 0

/**
 * Runs the binary in a tmux terminal of `columns` x `rows`, through script(1) so the raw bytes are recorded too; once
 * it has ended, gives them and what tmux shows: its whole buffer, the lines scrolled away included.
 */
const inTmux = async (args: ReadonlyArray<string>, columns: number, rows: number) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-tmux-"))
  const raw = path.join(dir, "raw")
  const socket = `agent-tools-test-${process.pid}-${path.basename(dir)}`
  const tmux = (...tmuxArgs: Array<string>) =>
    new Promise<string>((resolve, reject) =>
      ChildProcess.execFile(
        "tmux",
        ["-L", socket, "-f", "/dev/null", ...tmuxArgs],
        (error, stdout) => error === null ? resolve(stdout) : reject(error)
      )
    )
  const script = `script -qfec ${quote(commandLine(args))} ${quote(raw)}`
  try {
    await tmux(
      "new-session",
      "-d",
      "-x",
      String(columns),
      "-y",
      String(rows),
      `${script}; tmux -L ${socket} wait-for -S ended; sleep 60`
    )
    await tmux("wait-for", "ended")
    const buffer = await tmux("capture-pane", "-p", "-S", "-", "-E", "-")
    const lines = fs.readFileSync(raw, "utf8").split("\n")
    return { raw: lines.slice(1, -2).join("\n"), buffer }
  } finally {
    await tmux("kill-server").catch(() => {})
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** One run of the demo into a pipe, which two tests read. */
let demoRun: Promise<Ran & { readonly millis: number }> | undefined
const demoInPipe = () => {
  const started = Date.now()
  return demoRun ??= runCli(["demo"]).then((ran) => ({ ...ran, millis: Date.now() - started }))
}

describe.concurrent("agent-tools", () => {
  it("demo runs one model turn, then prints the model-facing outputs in call order, and exits 0", async () => {
    const { code, millis, stderr, stdout } = await demoInPipe()
    expect(code).toBe(0)
    expect(stderr).toBe("")
    expect(millis).toBeLessThan(15_000)
    expect(stdout).toContain("#6 asked permission to edit src/math.js (approved)")
    expect(stdout).toContain("-export const subtract = (a, b) => a + b\n+export const subtract = (a, b) => a - b")
    const outputs = stdout.slice(stdout.indexOf("What goes back to the model, in call order:"))
    const calls = [...outputs.matchAll(/^#(\d) \S+ \((call_\d)\)$/gm)].map((m) => `${m[1]} ${m[2]}`)
    expect(calls).toEqual([
      "1 call_1",
      "2 call_2",
      "3 call_3",
      "4 call_4",
      "5 call_5",
      "6 call_6",
      "7 call_7",
      "8 call_8",
      "9 call_9"
    ])
    // the second bash call sees what the first one did to the shared shell
    expect(outputs).toContain("#5 bash (call_5)\n  in src after step one\n  (exit code 0)")
    expect(outputs).toContain("#8 read_file (call_8)\n  Error: invalid arguments: path: expected a string, got 42")
    expect(outputs).toContain("#9 deploy_to_production (call_9)\n  Error: unknown tool \"deploy_to_production\"")
  }, 30_000)

  it("demo into a pipe: one plain line per change of a call, each at most 100 columns", async () => {
    const { code, stdout } = await demoInPipe()
    expect(code).toBe(0)
    expect(stdout).not.toMatch(SGR)
    const live = stdout.slice(0, stdout.indexOf("What goes back to the model"))
    const rows = live.split("\n").filter((line) => /^#\d /.test(line) && /[…✓✗▶] /.test(line))
    for (const row of rows) expect(widthOf(row)).toBeLessThanOrEqual(100)
    expect(rows).toContainEqual(expect.stringMatching(/^#7 index_docs .* ▶ \d+\.\ds 6\/6 indexed chunk 6$/))
    for (let call = 1; call <= 9; call++) {
      expect(rows.filter((row) => row.startsWith(`#${call} `) && / [✓✗] /.test(row))).toHaveLength(1)
    }
  }, 30_000)

  it.skipIf(!hasTmux)(
    "demo on an 80x24 terminal redraws its table in place: no line wider, the table once",
    async () => {
      const { buffer, raw } = await inTmux(["demo"], 80, 24)
      // what was written: no line wider than the terminal, and every redraw goes up exactly the rows it drew
      for (const line of printedLines(raw)) expect(widthOf(line), line).toBeLessThan(80)
      const ups = [...raw.matchAll(UP)].map((m) => Number(m[1]))
      expect(ups.length).toBeGreaterThan(10)
      expect(new Set(ups)).toEqual(new Set([9]))
      expect(raw).toMatch(SGR)
      // what the terminal shows at the end, scrolled-away lines included: each call's row once, finished
      const lines = buffer.split("\n")
      const rows = lines.filter((line) => /^#\d+ /.test(line) && /[…✓✗▶] /.test(line))
      expect(rows.map((row) => row.slice(0, 2))).toEqual(["#1", "#2", "#3", "#4", "#5", "#6", "#7", "#8", "#9"])
      for (const row of rows) expect(row).toMatch(/ [✓✗] \d+\.\ds /)
      expect(lines.filter((line) => line.startsWith("#6 asked permission to edit src/math.js"))).toHaveLength(1)
      expect(buffer).toContain("What goes back to the model, in call order:")
    },
    30_000
  )

  it.skipIf(!hasTmux)("demo on a terminal of 8 rows shows what fits, each row once, the rest summed up", async () => {
    const { buffer, raw } = await inTmux(["demo"], 50, 8)
    for (const line of printedLines(raw)) expect(widthOf(line), line).toBeLessThan(50)
    const rows = buffer.split("\n").filter((line) => /^#\d+ /.test(line) && /[…✓✗▶] /.test(line))
    expect(rows.map((row) => row.slice(0, 2))).toEqual(["#1", "#2", "#3", "#4", "#5"])
    expect(buffer).toContain("… 4 more calls: 0 running, 4 done")
  }, 30_000)

  it("demo on a terminal under NO_COLOR: redrawn in place, without a colour code", async () => {
    const plain = await onTerminal(["demo"], { env: { NO_COLOR: "1" } })
    expect(plain.code).toBe(0)
    expect([...plain.stdout.matchAll(UP)].map((m) => m[1])).toContain("9")
    expect(plain.stdout).not.toMatch(SGR)
  }, 30_000)

  it("--help has colour on a terminal only: none into a pipe, none under NO_COLOR", async () => {
    const terminal = await onTerminal(["--help"])
    expect(terminal.stdout).toMatch(SGR)
    expect(terminal.stdout).toContain("USAGE")
    const noColor = await onTerminal(["--help"], { env: { NO_COLOR: "1" } })
    expect(noColor.stdout).toContain("USAGE")
    expect(noColor.stdout).not.toMatch(SGR)
    const piped = await runCli(["--help"])
    expect(piped.code).toBe(0)
    expect(piped.stdout).toMatch(/^agent-tools\n\nagent-tools \d+\.\d+\.\d+/)
    expect(piped.stdout).not.toMatch(SGR)
    const usage = await runCli(["list", "--format", "cobol"])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain("Expected one of the following cases")
    expect(usage.stderr).not.toMatch(SGR)
  })

  it("the binary is a launcher of Node's modules only and one bundled file that needs no module resolution at start (see scripts/bundle-cli.mjs)", async () => {
    const launcher = fs.readFileSync(bin, "utf8")
    expect(launcher.startsWith("#!/usr/bin/env node\n")).toBe(true)
    expect(fs.statSync(bin).mode & 0o111).not.toBe(0)
    expect([...launcher.matchAll(/from "([^"]+)"/g)].map((m) => m[1]).filter((m) => !m.startsWith("node:"))).toEqual([])
    // the two files alone, with no node_modules anywhere above them, list the tools
    const alone = fs.mkdtempSync(path.join(os.tmpdir(), "cli-alone-"))
    fs.mkdirSync(path.join(alone, "dist/cli"), { recursive: true })
    for (const file of ["main.js", "agent-tools.cjs"]) {
      fs.copyFileSync(path.join(path.dirname(bin), file), path.join(alone, "dist/cli", file))
    }
    fs.writeFileSync(path.join(alone, "package.json"), JSON.stringify({ type: "module", version: "9.9.9" }))
    const listed = await runNode(path.join(alone, "dist/cli/main.js"), ["list", "--root", workspace({})], {
      cwd: alone
    })
    expect(listed.stderr).toBe("")
    expect(JSON.parse(listed.stdout)).toHaveLength(8)
    const version = await runNode(path.join(alone, "dist/cli/main.js"), ["--version"], { cwd: alone })
    expect(version.stdout.trim()).toBe("9.9.9")
  })

  it("a start leaves the bundle's compile cache, the next start reads it, and a cache V8 rejects is replaced", async () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), "cli-cache-"))
    const env = { AGENT_TOOLS_COMPILE_CACHE: cache }
    const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version
    const first = await runCli(["--version"], { env })
    expect(first.code).toBe(0)
    expect(first.stdout.trim()).toBe(version)
    const [file] = fs.readdirSync(cache)
    expect(file).toMatch(new RegExp(`-${process.version}-${process.arch}-\\d+-\\d+\\.v8$`))
    const made = fs.readFileSync(path.join(cache, file))
    const madeAt = fs.statSync(path.join(cache, file)).mtimeMs
    expect(made.length).toBeGreaterThan(100_000)
    // read, not made again: the file is left as it is
    const second = await runCli(["--version"], { env })
    expect(second.stdout.trim()).toBe(version)
    expect(fs.statSync(path.join(cache, file)).mtimeMs).toBe(madeAt)
    expect(fs.readFileSync(path.join(cache, file)).equals(made)).toBe(true)
    // garbage in its place: V8 rejects it, the start goes on without it and writes a good one
    fs.writeFileSync(path.join(cache, file), Buffer.alloc(made.length, 7))
    const third = await runCli(["--version"], { env })
    expect(third.code).toBe(0)
    expect(third.stdout.trim()).toBe(version)
    expect(fs.readdirSync(cache)).toEqual([file])
    expect(fs.readFileSync(path.join(cache, file)).equals(Buffer.alloc(made.length, 7))).toBe(false)
    // and V8 takes the new one: the next start leaves it as it is
    const rewrittenAt = fs.statSync(path.join(cache, file)).mtimeMs
    await runCli(["--version"], { env })
    expect(fs.statSync(path.join(cache, file)).mtimeMs).toBe(rewrittenAt)
    // Node's own switch turns it off
    const off = fs.mkdtempSync(path.join(os.tmpdir(), "cli-cache-"))
    const disabled = await runCli(["--version"], {
      env: { AGENT_TOOLS_COMPILE_CACHE: off, NODE_DISABLE_COMPILE_CACHE: "1" }
    })
    expect(disabled.stdout.trim()).toBe(version)
    expect(fs.readdirSync(off)).toEqual([])
  })

  it("--version prints the package's version", async () => {
    const { code, stdout } = await runCli(["--version"])
    expect(code).toBe(0)
    expect(stdout.trim()).toBe(JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version)
  })

  it("list prints the definitions in the format asked for", async () => {
    const dir = workspace({})
    const anthropic = await runCli(["list", "--format", "anthropic", "--root", dir])
    expect(anthropic.code).toBe(0)
    const definitions = JSON.parse(anthropic.stdout)
    expect(definitions.map((d: { name: string }) => d.name)).toEqual([
      "read_file",
      "write_file",
      "edit_file",
      "apply_patch",
      "bash",
      "glob",
      "grep",
      "list_dir"
    ])
    expect(definitions[0].input_schema.type).toBe("object")
    const openai = JSON.parse((await runCli(["list", "--root", dir])).stdout)
    expect(openai[0]).toMatchObject({ type: "function", function: { name: "read_file" } })
    const mcp = JSON.parse((await runCli(["list", "--format", "mcp", "--root", dir])).stdout)
    expect(mcp[0].annotations).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false
    })
  })

  it("a usage error exits 2", async () => {
    expect((await runCli(["list", "--format", "cobol"])).code).toBe(2)
    expect((await runCli(["no-such-command"])).code).toBe(2)
    const unknown = await runCli(["call", "nope", "{}"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("unknown tool \"nope\"; the tools are read_file, write_file")
  })

  it("call prints the output on stdout and exits 0; a tool error goes to stderr as Error: ... with exit 1", async () => {
    const dir = workspace({ "notes.txt": "first\nsecond\n" })
    const ok = await runCli(["call", "read_file", "{\"path\":\"notes.txt\"}", "--root", dir])
    expect(ok).toEqual({ code: 0, stdout: "     1\tfirst\n     2\tsecond\n", stderr: "" })
    const failed = await runCli(["call", "read_file", "{\"path\":\"missing.txt\"}", "--root", dir])
    expect(failed.code).toBe(1)
    expect(failed.stdout).toBe("")
    expect(failed.stderr).toBe(
      "Error: missing.txt does not exist; check the path (list_dir or glob show what is there)\n"
    )
    const invalid = await runCli(["call", "read_file", "{\"path\":", "--root", dir])
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toMatch(/^Error: invalid arguments: not valid JSON/)
  })

  it("call and run refuse a write through a dangling link to outside; nothing appears there", async () => {
    const dir = workspace({ "docs/readme.md": "docs\n" })
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "cli-outside-"))
    fs.symlinkSync(path.join(outside, "planted.sh"), path.join(dir, "docs/notes.md"))
    fs.symlinkSync(path.join(outside, "gen"), path.join(dir, "gen"))
    const refused = (shown: string) => `Error: ${shown} is outside the workspace; use a path inside it\n`
    const called = await runCli([
      "call",
      "write_file",
      "{\"path\":\"docs/notes.md\",\"content\":\"echo owned\"}",
      "--root",
      dir,
      "--yes"
    ])
    expect(called).toEqual({ code: 1, stdout: "", stderr: refused("docs/notes.md") })
    const ran = await runCli(["run", "--root", dir, "--yes", "write_file", "--path", "gen/a/b.sh", "--content", "x"])
    expect(ran).toEqual({ code: 1, stdout: "", stderr: refused("gen/a/b.sh") })
    expect(fs.readdirSync(outside)).toEqual([])
  })

  it("call reads the arguments from stdin with -", async () => {
    const dir = workspace({ "a.txt": "from stdin\n" })
    const ran = await runCli(["call", "read_file", "-", "--root", dir], { input: "{\"path\":\"a.txt\"}" })
    expect(ran.stdout).toBe("     1\tfrom stdin\n")
  })

  it("call refuses what needs permission without a terminal, unless --yes", async () => {
    const dir = workspace({})
    const refused = await runCli(["call", "write_file", "{\"path\":\"x.txt\",\"content\":\"x\"}", "--root", dir])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      "Error: permission denied: write 1 lines to x.txt: no terminal to ask on; run again with --yes to allow it\n"
    )
    expect(fs.existsSync(path.join(dir, "x.txt"))).toBe(false)
    const allowed = await runCli([
      "call",
      "write_file",
      "{\"path\":\"x.txt\",\"content\":\"x\"}",
      "--root",
      dir,
      "--yes"
    ])
    expect(allowed).toEqual({ code: 0, stdout: "created x.txt (1 lines)\n", stderr: "" })
    const bash = await runCli(["call", "bash", "{\"command\":\"echo hi; echo err >&2\"}", "--root", dir, "--yes"])
    expect(bash.stdout).toBe("hi\nerr\n(exit code 0)\n")
  })

  it("call asks on a terminal, showing the diff; y allows, anything else refuses", async () => {
    // a real terminal, from util-linux's script(1); the answer is typed once the prompt is up
    const answering = (dir: string, answer: string) =>
      new Promise<Ran>((resolve, reject) => {
        const line = `${process.execPath} ${bin} call write_file '{"path":"t.txt","content":"typed"}' --root ${dir}`
        const child = ChildProcess.spawn("script", ["-qfec", line, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"] })
        let stdout = ""
        let answered = false
        child.stdin.on("error", () => {})
        child.stdout.on("data", (d) => {
          stdout += d
          if (!answered && stdout.includes("Allow? [y/N]")) {
            answered = true
            child.stdin.write(`${answer}\n`)
          }
        })
        child.on("error", reject)
        child.on("close", (code) => resolve({ code, stdout, stderr: "" }))
      })
    const yes = workspace({})
    const allowed = await answering(yes, "y")
    expect(allowed.stdout).toContain("--- a/t.txt\r\n+++ b/t.txt\r\n")
    expect(allowed.stdout).toContain("write_file wants to write: write 1 lines to t.txt")
    expect(allowed.code).toBe(0)
    expect(fs.readFileSync(path.join(yes, "t.txt"), "utf8")).toBe("typed")
    const no = workspace({})
    const refused = await answering(no, "n")
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain("Error: permission denied: write 1 lines to t.txt: refused at the prompt")
    expect(fs.existsSync(path.join(no, "t.txt"))).toBe(false)
  }, 30_000)

  it("call reports progress on stderr without a terminal, one line per report", async () => {
    const dir = workspace({})
    const ran = await runCli([
      "call",
      "bash",
      "{\"command\":\"echo one; sleep 0.6; echo two\"}",
      "--root",
      dir,
      "--yes"
    ])
    expect(ran.code).toBe(0)
    expect(ran.stdout).toBe("one\ntwo\n(exit code 0)\n")
    expect(ran.stderr.split("\n")).toContain("one")
  })

  it("provider serves the workspace tools as a stdio provider: header, ready line, answers by call_id", async () => {
    const dir = workspace({ "a.txt": "hi\n" })
    const requests = [
      { call_id: "1", function: { name: "read_file", arguments: "{\"path\":\"a.txt\"}" }, context: { dir } },
      { call_id: "2", function: { name: "nope", arguments: "{}" }, context: { dir } },
      { call_id: "3", function: { name: "read_file", arguments: "{\"path\":1}" }, context: { dir } }
    ]
    const ran = await runCli(["provider", "--root", dir], {
      input: requests.map((r) => JSON.stringify(r)).join("\n") + "\n"
    })
    expect(ran.code).toBe(0)
    const lines = ran.stdout.split("\n")
    const blank = lines.indexOf("")
    expect(lines.slice(0, blank).map((l) => JSON.parse(l).function.name)).toEqual([
      "read_file",
      "write_file",
      "edit_file",
      "apply_patch",
      "bash",
      "glob",
      "grep",
      "list_dir"
    ])
    const answers = Object.fromEntries(
      lines.slice(blank + 1).filter((l) => l !== "").map((l) => JSON.parse(l)).map((a) => [a.call_id, a.content])
    )
    expect(answers).toEqual({
      "1": "     1\thi",
      "2":
        "Error: unknown tool \"nope\"; available tools: read_file, write_file, edit_file, apply_patch, bash, glob, grep, list_dir",
      "3": "Bad arguments: path: expected a string, got 1"
    })
  })

  it(
    "provider answers a 600 MB request line as too large, serves the next, holds little of it, and exits 0",
    async () => {
      const dir = workspace({ "a.txt": "hi\n" })
      const child = ChildProcess.spawn(process.execPath, [bin, "provider", "--root", dir], { stdio: "pipe" })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d) => (stdout += d))
      child.stderr.on("data", (d) => (stderr += d))
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
      const write = (text: string) =>
        new Promise<void>((resolve) => child.stdin.write(text) ? resolve() : child.stdin.once("drain", () => resolve()))
      const peakKb = () => Number(/^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${child.pid}/status`, "utf8"))![1])
      while (!stdout.includes("\n\n")) await new Promise((resolve) => setTimeout(resolve, 20))
      const before = peakKb()
      const head = "{\"call_id\":\"huge\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\""
      await write(head)
      const chunk = "x".repeat(1024 * 1024)
      for (let i = 0; i < 600; i++) await write(chunk)
      await write("\\\"}\"}}\n")
      const after = { call_id: "after", function: { name: "read_file", arguments: "{\"path\":\"a.txt\"}" } }
      await write(JSON.stringify(after) + "\n")
      while (!stdout.includes("\"after\"")) await new Promise((resolve) => setTimeout(resolve, 20))
      const growthMb = (peakKb() - before) / 1024
      child.stdin.end()
      expect(await exited).toBe(0)
      const answers = stdout.slice(stdout.indexOf("\n\n") + 2).trim().split("\n").map((l) => JSON.parse(l))
      const bytes = head.length + 600 * 1024 * 1024 + 6
      expect(answers).toEqual([
        { call_id: "huge", content: `Error: the request is ${bytes} bytes, over the limit of 16 MiB for one line` },
        { call_id: "after", content: "     1\thi" }
      ])
      expect(growthMb).toBeLessThan(150)
      expect(stderr).toBe("")
    },
    60_000
  )

  it("bridge serves a stdio provider's tools over MCP", async () => {
    const client = new Client({ name: "cli-test", version: "1.0.0" })
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, "bridge", "--", process.execPath, path.join(root, "test/fixtures/provider-raw.mjs")],
      stderr: "pipe"
    })
    await client.connect(transport)
    try {
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toContain("add")
      const added = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })
      expect(added.isError ?? false).toBe(false)
      const invalid = await client.callTool({ name: "add", arguments: { a: "two", b: 3 } })
      expect(invalid).toMatchObject({ isError: true })
      expect((invalid.content as Array<{ text: string }>)[0].text).toMatch(/^invalid arguments: a: expected an integer/)
    } finally {
      await client.close()
    }
  }, 30_000)

  it("inspect lists a stdio server's tools as a table, and calls one with --call/--args", async () => {
    const everything = ["--", process.execPath, serverEverything]
    const [listed, echoed, invalid, neither] = await Promise.all([
      runCli(["inspect", ...everything]),
      runCli(["inspect", "--call", "echo", "--args", "{\"message\":\"hi\"}", ...everything]),
      runCli(["inspect", "--call", "echo", "--args", "{}", ...everything]),
      runCli(["inspect"])
    ])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(/^mcp-servers\/everything /)
    expect(listed.stdout).toMatch(/^TOOL +HINTS +DESCRIPTION$/m)
    expect(listed.stdout).toMatch(/^echo +read-only,idempotent +Echoes back the input string$/m)
    expect(echoed).toMatchObject({ code: 0, stdout: "Echo: hi\n" })
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toBe("Error: invalid arguments: message: missing required property, expected a string\n")
    expect(neither.code).toBe(2)
  }, 60_000)

  it.live(
    "inspect --url signs in: prints the page to open, waits on a loopback redirect, keeps what it got",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const as = yield* authorizationServer()
        const mcp = yield* protectedServer(as, () => {
          const server = new SdkMcpServer({ name: "notes", version: "1.0.0" })
          server.registerTool("read_notes", { description: "Read the notes" }, () => ({
            content: [{ type: "text", text: "a note" }]
          }))
          return server
        })
        const store = fs.mkdtempSync(path.join(os.tmpdir(), "cli-auth-"))
        const inspect = () =>
          Effect.promise(() =>
            new Promise<Ran>((resolve, reject) => {
              const child = ChildProcess.spawn(process.execPath, [
                bin,
                "inspect",
                "--url",
                mcp.url,
                "--auth-store",
                store
              ], {
                stdio: ["ignore", "pipe", "pipe"]
              })
              let stdout = ""
              let stderr = ""
              child.stdout.on("data", (d) => (stdout += d))
              child.stderr.on("data", (d) => {
                stderr += d
                // the user opens the page: the authorization server sends the browser back to the loopback port
                const page = /^ {2}(http:\/\/\S+)$/m.exec(stderr)?.[1]
                if (page !== undefined && !stderr.includes("(opened)")) {
                  stderr += "(opened)"
                  void fetch(page).then((response) => response.text())
                }
              })
              child.on("error", reject)
              child.on("close", (code) => resolve({ code, stdout, stderr }))
            })
          )
        const first = yield* inspect()
        expect(first.stderr).toMatch(/^127\.0\.0\.1:\d+ asks you to sign in\. Open this page in a browser/m)
        expect(first.code).toBe(0)
        expect(first.stdout).toMatch(/^notes 1\.0\.0 \(MCP 2026-07-28\)$/m)
        expect(first.stdout).toMatch(/^read_notes +Read the notes$/m)
        expect(fs.readdirSync(store).length).toBe(1)
        // signed in: the next run asks nothing
        const second = yield* inspect()
        expect(second).toMatchObject({ code: 0, stderr: "" })
        expect(as.calls.filter((call) => call === "authorize").length).toBe(1)
      })),
    60_000
  )

  it("mcp --http serves the workspace, and inspect --url reaches it", async () => {
    const dir = workspace({ "h.txt": "over http\n" })
    const server = ChildProcess.spawn(process.execPath, [bin, "mcp", "--http", "0", "--root", dir], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let stderr = ""
        server.stderr.on("data", (d) => {
          stderr += d
          const match = / at (http:\/\/\S+)/.exec(stderr)
          if (match !== null) resolve(match[1])
        })
        server.on("exit", (code) => reject(new Error(`the server exited with ${code}: ${stderr}`)))
      })
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      const read = await runCli(["inspect", "--url", url, "--call", "read_file", "--args", "{\"path\":\"h.txt\"}"])
      expect(read).toMatchObject({ code: 0, stdout: "     1\tover http\n" })
    } finally {
      server.kill()
    }
  }, 60_000)
})
