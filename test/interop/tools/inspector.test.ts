/**
 * The MCP Inspector CLI (a third-party client, on Node 22) driving examples/mcp-stdio-server.ts, a stdio server
 * written with this library and run by the project's Node 20 through tsx. The Inspector prints its result as JSON
 * on stdout (so the server's stdout must carry nothing but the protocol) and exits non-zero on an `isError` result.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as peers from "../peers.js"

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const server = path.join(peers.root, "examples/mcp-stdio-server.ts")

/** `mcp-inspector --cli <a server command> ...args --format json`, to completion. */
const inspectServer = (serverCommand: ReadonlyArray<string>, ...args: Array<string>): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      peers.node22,
      [
        peers.inspector,
        "--cli",
        "--connect-timeout",
        "60000",
        ...serverCommand,
        ...args,
        "--format",
        "json"
      ],
      { cwd: peers.root, stdio: ["ignore", "pipe", "pipe"] }
    )
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** The example server, run by Node 20 through tsx. */
const inspect = (...args: Array<string>): Promise<Run> =>
  inspectServer([process.execPath, "--import", "tsx", server], ...args)

const resultOf = (run: Run): Record<string, unknown> => {
  try {
    return JSON.parse(run.stdout).result
  } catch {
    throw new Error(`the Inspector printed no JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`)
  }
}

describe("MCP Inspector CLI against examples/mcp-stdio-server.ts", () => {
  let list: Run
  let call: Run
  let invalid: Run

  beforeAll(async () => {
    expect(peers.toolsInstalled(), "the Inspector and Node 22 live in tools/: run `npm ci --prefix tools`").toBe(true)
    // three Inspector sessions at once: each one starts a Node 22 client and a Node 20 server
    const runs = await Promise.all([
      inspect("--method", "tools/list", "--strict"),
      inspect("--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "--tool-arg", "b=3"),
      inspect("--method", "tools/call", "--tool-name", "add", "--tool-args-json", "{\"a\":2}")
    ])
    list = runs[0]
    call = runs[1]
    invalid = runs[2]
  }, 120_000)

  it("tools/list: every tool with its schemas and hints, portable by the Inspector's --strict checks", () => {
    expect(list.code, list.stderr).toBe(0)
    const tools = resultOf(list).tools as Array<Record<string, unknown>>
    expect(tools.map((tool) => tool.name)).toEqual(["upper", "add", "tiny_image"])
    expect(tools[1]).toEqual({
      name: "add",
      title: "Add",
      description: "Add two integers",
      inputSchema: {
        type: "object",
        properties: {
          a: { type: "integer", description: "an integer" },
          b: { type: "integer", description: "an integer" }
        },
        required: ["a", "b"],
        additionalProperties: false
      },
      outputSchema: {
        type: "object",
        properties: { sum: { type: "integer", description: "an integer" } },
        required: ["sum"],
        additionalProperties: false
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false }
    })
  })

  it("tools/call: the sum as text and as structured content", () => {
    expect(call.code, call.stderr).toBe(0)
    expect(resultOf(call)).toEqual({
      content: [{ type: "text", text: "{\"sum\":5}" }],
      structuredContent: { sum: 5 }
    })
  })

  it("an invalid call: an isError result the Inspector prints, exiting non-zero", () => {
    expect(invalid.code).not.toBe(0)
    expect(resultOf(invalid)).toEqual({
      content: [{ type: "text", text: "invalid arguments: b: missing required property, expected an integer" }],
      isError: true
    })
  })
})

describe("MCP Inspector CLI against `agent-tools mcp` (dist/, no TypeScript loader)", () => {
  let list: Run
  let call: Run
  let invalid: Run
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "inspector-workspace-"))
  fs.writeFileSync(path.join(workspace, "hello.txt"), "hello from the workspace\n")

  beforeAll(async () => {
    expect(peers.toolsInstalled(), "the Inspector and Node 22 live in tools/: run `npm ci --prefix tools`").toBe(true)
    const cli = [process.execPath, path.join(peers.root, "dist/cli/main.js"), "mcp", "--root", workspace]
    const runs = await Promise.all([
      inspectServer(cli, "--method", "tools/list"),
      inspectServer(cli, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=hello.txt"),
      inspectServer(cli, "--method", "tools/call", "--tool-name", "read_file", "--tool-args-json", "{\"path\":7}")
    ])
    list = runs[0]
    call = runs[1]
    invalid = runs[2]
  }, 120_000)

  it("lists the eight workspace tools with their hints", () => {
    expect(list.code, list.stderr).toBe(0)
    const tools = resultOf(list).tools as Array<Record<string, unknown>>
    expect(tools.map((tool) => tool.name)).toEqual([
      "read_file",
      "write_file",
      "edit_file",
      "apply_patch",
      "bash",
      "glob",
      "grep",
      "list_dir"
    ])
    expect(tools[4].annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false })
  })

  it("calls read_file in the workspace", () => {
    expect(call.code, call.stderr).toBe(0)
    expect(resultOf(call).content).toEqual([{ type: "text", text: "     1\thello from the workspace" }])
  })

  it("answers an invalid call with isError and the invalid-arguments text", () => {
    expect(invalid.code).not.toBe(0)
    expect(resultOf(invalid)).toEqual({
      content: [{ type: "text", text: "invalid arguments: path: expected a string, got 7" }],
      isError: true
    })
  })
})
