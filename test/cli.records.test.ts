/**
 * A host that dies: `agent-tools mcp` (the built binary, as a child process) is SIGKILLed while a command it ran
 * left work in the background; the next host of the same folder ends that work as it starts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Records from "../src/cli/records.js"
import { alive, killAll } from "./fixtures/processes.js"
import { root } from "./interop/peers.js"

const bin = path.join(root, "dist/cli/main.js")

const waitFor = async (what: () => boolean, millis: number): Promise<boolean> => {
  const deadline = Date.now() + millis
  while (Date.now() < deadline) {
    if (what()) return true
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return what()
}

/** An MCP client connected to `agent-tools mcp --root <dir>`, with its own state folder. */
const connect = async (dir: string, state: string) => {
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: run npm run build first`)
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp", "--root", dir],
    env: { ...process.env, XDG_STATE_HOME: state } as Record<string, string>,
    stderr: "pipe"
  })
  const client = new Client({ name: "records-test", version: "1.0.0" })
  await client.connect(transport)
  return { client, transport }
}

const bashOutput = async (client: Client, command: string): Promise<string> => {
  const result = await client.callTool({ name: "bash", arguments: { command } })
  return (result.content as Array<{ type: string; text: string }>).map((c) => c.text).join("\n")
}

describe("agent-tools records", () => {
  it(
    "what a SIGKILLed host left running (setsid included) is ended when the next host of the folder starts",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-records-"))
      const state = fs.mkdtempSync(path.join(os.tmpdir(), "cli-state-"))
      const leftovers: Array<number> = []
      try {
        const first = await connect(dir, state)
        const output = await bashOutput(first.client, "sleep 1000 & echo $!; setsid sleep 1001 & echo $!")
        leftovers.push(...output.split("\n").filter((l) => /^\d+$/.test(l)).map(Number))
        expect(leftovers.length).toBe(2)
        const host = first.transport.pid!
        const records = Records.folder(dir, { XDG_STATE_HOME: state })
        const [hostFile] = fs.readdirSync(records)
        expect(hostFile).toMatch(new RegExp(`^${host}-\\d+\\.jsonl$`))
        const line = JSON.parse(fs.readFileSync(path.join(records, hostFile), "utf8").split("\n")[0])
        expect(line).toMatchObject({ tool: "bash", phase: "during", namespace: "bash/process" })
        process.kill(host, "SIGKILL")
        expect(await waitFor(() => !alive(host), 5_000)).toBe(true)
        await first.client.close().catch(() => {})
        // the host died without its scope closing: its commands' work goes on
        for (const pid of leftovers) expect(alive(pid), `pid ${pid}`).toBe(true)

        const second = await connect(dir, state)
        try {
          await second.client.listTools()
          for (const pid of leftovers) expect(await waitFor(() => !alive(pid), 5_000), `pid ${pid}`).toBe(true)
          // the dead host's file is gone; the live host has its own
          expect(fs.readdirSync(records)).toEqual([expect.stringMatching(new RegExp(`^${second.transport.pid}-`))])
        } finally {
          await second.client.close()
        }
        // a host that ends normally removes its file
        expect(await waitFor(() => fs.readdirSync(records).length === 0, 5_000)).toBe(true)
      } finally {
        killAll(leftovers)
      }
    },
    30_000
  )

  it("a live host's records are left alone by a second host of the same folder", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-records-"))
    const state = fs.mkdtempSync(path.join(os.tmpdir(), "cli-state-"))
    const first = await connect(dir, state)
    let pid = 0
    try {
      pid = Number((await bashOutput(first.client, "sleep 1000 & echo $!")).split("\n")[0])
      const second = await connect(dir, state)
      await second.client.listTools()
      await second.client.close()
      expect(alive(pid)).toBe(true)
    } finally {
      await first.client.close()
    }
    // the first host's scope ends its own leftovers
    expect(await waitFor(() => !alive(pid), 5_000)).toBe(true)
  }, 30_000)
})
