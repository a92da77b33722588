/**
 * Row 4: our `McpServer` over stdio against the MCP SDK's own `McpServer` (zod) serving the same tool, both driven
 * by the same SDK `Client` over `StdioClientTransport`, both servers compiled JavaScript run by `node`.
 * - cold start: from spawning the server to the client holding the listed tools (`connect` + `tools/list`);
 * - throughput: calls with 16 in flight over one connection per server, kept open across rounds.
 */
import { Client } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { fileURLToPath } from "node:url"
import { ANSWER, TOOL_NAME } from "./constants.js"
import { interleave, median, millis, perSecond, plan, quick, ratioOf, report, timed } from "./harness.js"

export const OURS = fileURLToPath(new URL("./servers/mcp-ours.js", import.meta.url))
export const SDK = fileURLToPath(new URL("./servers/mcp-sdk.js", import.meta.url))

const IN_FLIGHT = 16
const CALLS = quick ? 400 : 2_000

/** An SDK client connected to a server script it spawns. */
export const connect = async (script: string): Promise<Client> => {
  const client = new Client({ name: "bench", version: "1.0.0" })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [script], stderr: "inherit" }))
  return client
}

/** Spawn to listed tools, then the server is closed (outside the timing). */
const coldStart = async (script: string): Promise<number> => {
  let client: Client | undefined
  const elapsed = await timed(async () => {
    client = await connect(script)
    const listed = await client.listTools()
    if (listed.tools.length !== 1) throw new Error("row 4: the server lists no tool")
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
  const starts = await interleave({
    ours: () => coldStart(OURS),
    sdk: () => coldStart(SDK)
  }, { ...plan({ warmup: 2, rounds: 11 }), label: "row 4 cold start" })

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
      what: "cold start: spawn to listed tools",
      figure: millis(median(starts.ours)),
      baseline: `SDK \`McpServer\` ${millis(median(starts.sdk))}`,
      ...start,
      target: "<= 1.2x",
      met: start.ratio <= 1.2
    }
  ])
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
