/**
 * Row 4: our `McpServer` over stdio against the MCP SDK's own `McpServer` (zod) serving the same tool, both driven
 * by the same SDK `Client` over `StdioClientTransport`, both servers compiled JavaScript run by `node`.
 * - cold start (4b): from spawning the server to the client holding the listed tools (`connect` + `tools/list`),
 *   for the server a user starts: `agent-tools mcp` (the package's binary, dist/cli/main.js, rebuilt by
 *   `bench/main.ts` when stale) serving the workspace tools of an empty folder, its compile cache made by the
 *   warm-up rounds in a folder of the row's own; 4c, for information, a server of one's own on the library's
 *   modules (`McpServer.stdio` in a file that imports them, not bundled);
 * - throughput: calls with 16 in flight over one connection per server, kept open across rounds.
 */
import { Client } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { root } from "./build.js"
import { ANSWER, TOOL_NAME } from "./constants.js"
import { interleave, median, millis, perSecond, plan, quick, ratioOf, report, timed } from "./harness.js"

export const OURS = fileURLToPath(new URL("./servers/mcp-ours.js", import.meta.url))
export const SDK = fileURLToPath(new URL("./servers/mcp-sdk.js", import.meta.url))
/** The package's binary: the launcher of the bundled CLI. */
export const BIN = path.join(root, "dist/cli/main.js")

const IN_FLIGHT = 16
const CALLS = quick ? 400 : 2_000

/** An SDK client connected to a server script it spawns. */
export const connect = async (
  script: string,
  args: ReadonlyArray<string> = [],
  env?: Record<string, string>
): Promise<Client> => {
  const client = new Client({ name: "bench", version: "1.0.0" })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [script, ...args],
      stderr: "inherit",
      ...(env === undefined ? {} : { env: { ...process.env, ...env } as Record<string, string> })
    })
  )
  return client
}

/** Spawn to listed tools (`tools` of them), then the server is closed (outside the timing). */
const coldStart = async (
  tools: number,
  script: string,
  args?: ReadonlyArray<string>,
  env?: Record<string, string>
): Promise<number> => {
  let client: Client | undefined
  const elapsed = await timed(async () => {
    client = await connect(script, args, env)
    const listed = await client.listTools()
    if (listed.tools.length !== tools) throw new Error(`row 4: the server lists ${listed.tools.length} tools`)
  })
  await client!.close()
  return elapsed
}

/** `n` calls with `inFlight` outstanding at any moment; gives calls per second. */
export const burst = async (client: Client, n: number, inFlight: number): Promise<number> => {
  let next = 0
  const worker = async () => {
    while (next < n) {
      const i = next++
      await client.callTool({ name: TOOL_NAME, arguments: { path: `/srv/data/file-${i}.txt`, max_bytes: 1024 + i } })
    }
  }
  const elapsed = await timed(() => Promise.all(Array.from({ length: inFlight }, worker)))
  return n / (elapsed / 1000)
}

const check = async (client: Client, who: string): Promise<void> => {
  const result = await client.callTool({ name: TOOL_NAME, arguments: { path: "/a" } })
  const content = result.content as Array<{ type: string; text?: string }>
  if (result.isError === true || content[0]?.text !== ANSWER) {
    throw new Error(`row 4: ${who} answered ${JSON.stringify(result)}`)
  }
}

const main = async () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "bench-row4-"))
  const cache = { AGENT_TOOLS_COMPILE_CACHE: path.join(workspace, ".cache") }
  const starts = await interleave({
    ours: () => coldStart(8, BIN, ["mcp", "--root", workspace], cache),
    library: () => coldStart(1, OURS),
    sdk: () => coldStart(1, SDK)
  }, { ...plan({ warmup: 2, rounds: 11 }, { warmup: 2, rounds: 5 }), label: "row 4 cold start" })
  fs.rmSync(workspace, { recursive: true, force: true })

  const ours = await connect(OURS)
  const sdk = await connect(SDK)
  await check(ours, "our server")
  await check(sdk, "the SDK's server")
  const throughput = await interleave({
    ours: () => burst(ours, CALLS, IN_FLIGHT),
    sdk: () => burst(sdk, CALLS, IN_FLIGHT)
  }, { ...plan({ warmup: 2, rounds: 9 }), label: "row 4 throughput" })
  await ours.close()
  await sdk.close()

  const start = ratioOf(starts.ours, starts.sdk)
  const library = ratioOf(starts.library, starts.sdk)
  const rate = ratioOf(throughput.ours, throughput.sdk)
  report([
    {
      id: "4a",
      what: `our \`McpServer\` over stdio, ${CALLS.toLocaleString("en-US")} calls, ${IN_FLIGHT} in flight`,
      figure: perSecond(median(throughput.ours)),
      baseline: `SDK \`McpServer\` ${perSecond(median(throughput.sdk))}`,
      ...rate,
      target: ">= 0.95x",
      met: rate.ratio >= 0.95
    },
    {
      id: "4b",
      what: "cold start: spawn to listed tools, `agent-tools mcp` (8 workspace tools)",
      figure: millis(median(starts.ours)),
      baseline: `SDK \`McpServer\` ${millis(median(starts.sdk))}`,
      ...start,
      target: "<= 1.2x",
      met: start.ratio <= 1.2
    },
    {
      id: "4c",
      what: "the same, a server of one's own on the library's modules (not bundled); for information",
      figure: millis(median(starts.library)),
      baseline: `SDK \`McpServer\` ${millis(median(starts.sdk))}`,
      ...library,
      target: "-",
      met: null
    }
  ])
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
