/**
 * The `agent-tools` binary, run as a child process from dist/ (built by `npm run build`, which CI runs before the
 * tests), the way a user runs it: no TypeScript loader.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { root, serverEverything } from "./interop/peers.js"

const bin = path.join(root, "dist/cli/main.js")

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the binary without a terminal (stdin is a pipe closed after `input`). */
export const runCli = (args: ReadonlyArray<string>, options: { readonly input?: string; readonly cwd?: string } = {}) =>
  new Promise<Ran>((resolve, reject) => {
    if (!fs.existsSync(bin)) return reject(new Error(`${bin} is missing: run npm run build first`))
    const child = ChildProcess.spawn(process.execPath, [bin, ...args], {
      cwd: options.cwd ?? root,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })

const workspace = (files: Record<string, string>): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-test-"))
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), content)
  }
  return dir
}

describe("agent-tools", () => {
  it("demo runs one model turn live, then prints the model-facing outputs in call order, and exits 0", async () => {
    const started = Date.now()
    const { code, stderr, stdout } = await runCli(["demo"])
    expect(code).toBe(0)
    expect(stderr).toBe("")
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(stdout).toContain("permission asked for: edit src/math.js (approved)")
    expect(stdout).toContain("-export const subtract = (a, b) => a + b\n+export const subtract = (a, b) => a - b")
    expect(stdout).toContain("6/6 indexed chunk 6")
    const outputs = stdout.slice(stdout.indexOf("What goes back to the model, in call order:"))
    const ids = [...outputs.matchAll(/^\[(call_\d)\]/gm)].map((m) => m[1])
    expect(ids).toEqual(["call_1", "call_2", "call_3", "call_4", "call_5", "call_6", "call_7", "call_8", "call_9"])
    // the second bash call sees what the first one did to the shared shell
    expect(outputs).toContain("[call_5] bash\n  in src after step one\n  (exit code 0)")
    expect(outputs).toContain("[call_8] read_file\n  Error: invalid arguments: path: expected a string, got 42")
    expect(outputs).toContain("[call_9] deploy_to_production\n  Error: unknown tool \"deploy_to_production\"")
  }, 30_000)

  it("the binary is one bundled file that needs no module resolution at start (see scripts/bundle-cli.mjs)", () => {
    const source = fs.readFileSync(bin, "utf8")
    expect(source.startsWith("#!/usr/bin/env node\n")).toBe(true)
    expect(source).not.toMatch(/from "(effect|@effect|@modelcontextprotocol)\//)
    expect(fs.statSync(bin).mode & 0o111).not.toBe(0)
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
    const onTerminal = (dir: string, answer: string) =>
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
    const allowed = await onTerminal(yes, "y")
    expect(allowed.stdout).toContain("--- a/t.txt\r\n+++ b/t.txt\r\n")
    expect(allowed.stdout).toContain("write_file wants to write: write 1 lines to t.txt")
    expect(allowed.code).toBe(0)
    expect(fs.readFileSync(path.join(yes, "t.txt"), "utf8")).toBe("typed")
    const no = workspace({})
    const refused = await onTerminal(no, "n")
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
        "Error: unknown tool \"nope\"; available tools: read_file, write_file, edit_file, bash, glob, grep, list_dir",
      "3": "Bad arguments: path: expected a string, got 1"
    })
  })

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
    const listed = await runCli(["inspect", ...everything])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(/^mcp-servers\/everything /)
    expect(listed.stdout).toMatch(/^TOOL +HINTS +DESCRIPTION$/m)
    expect(listed.stdout).toMatch(/^echo +read-only,idempotent +Echoes back the input string$/m)
    const echoed = await runCli(["inspect", "--call", "echo", "--args", "{\"message\":\"hi\"}", ...everything])
    expect(echoed).toMatchObject({ code: 0, stdout: "Echo: hi\n" })
    const invalid = await runCli(["inspect", "--call", "echo", "--args", "{}", ...everything])
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toBe("Error: invalid arguments: message: missing required property, expected a string\n")
    expect((await runCli(["inspect"])).code).toBe(2)
  }, 60_000)

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
