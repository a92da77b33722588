/**
 * Row 15: a tool result of 10 MB of text, and the memory it costs (the peak of the process's resident set while the
 * result is made, carried and handed on, minus what was resident just before; bench/servers/big-result.ts), as a
 * multiple of the result's size:
 * - 15a: through `Executor.run`, the outcome held;
 * - 15b: through our `McpServer.stdio` to an SDK `Client` (the server's process measured);
 * against, in the same run, the floor: a process that makes the result and holds it. A fresh process per figure
 * (a peak is a process's own), interleaved.
 */
import { Client } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { RESULT_BYTES } from "./constants.js"
import { interleave, median, megabytes, plan, ratioOf, report } from "./harness.js"

const SCRIPT = fileURLToPath(new URL("./servers/big-result.js", import.meta.url))

const inChild = (mode: "floor" | "executor"): Promise<number> =>
  new Promise((resolve, reject) =>
    execFile(process.execPath, ["--expose-gc", SCRIPT, mode], { maxBuffer: 1024 * 1024 }, (error, stdout) => {
      if (error !== null) return reject(error)
      const { growth, length } = JSON.parse(stdout) as { growth: number; length: number }
      if (length !== RESULT_BYTES) return reject(new Error(`row 15: ${mode} gave ${length} characters`))
      resolve(growth)
    })
  )

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>): string =>
  (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? "").join("")

const throughMcp = async (): Promise<number> => {
  const client = new Client({ name: "bench", version: "1.0.0" })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--expose-gc", SCRIPT, "mcp"],
      stderr: "inherit",
      // the SDK reads at most 10 MB a message by default: the answer is a little more
      maxBufferSize: 64 * 1024 * 1024
    })
  )
  try {
    const { resident } = JSON.parse(textOf(await client.callTool({ name: "memory", arguments: { reset: true } })))
    const big = await client.callTool({ name: "big", arguments: {} })
    if (textOf(big).length !== RESULT_BYTES) throw new Error(`row 15: MCP gave ${textOf(big).length} characters`)
    const { peak } = JSON.parse(textOf(await client.callTool({ name: "memory", arguments: { reset: false } })))
    return peak - resident
  } finally {
    await client.close()
  }
}

const main = async () => {
  const figures = await interleave({
    floor: () => inChild("floor"),
    executor: () => inChild("executor"),
    mcp: throughMcp
  }, { ...plan({ warmup: 1, rounds: 7 }), label: "row 15" })
  const size = figures.floor.map(() => RESULT_BYTES)
  const executor = ratioOf(figures.executor, size)
  const mcp = ratioOf(figures.mcp, size)
  const floor = `the result alone ${megabytes(median(figures.floor))} (${
    (median(figures.floor) / RESULT_BYTES).toFixed(2)
  }x), result ${megabytes(RESULT_BYTES)}`
  report([
    {
      id: "15a",
      what: "a 10 MB tool result through `Executor.run`: peak resident growth / the result's size",
      figure: megabytes(median(figures.executor)),
      baseline: floor,
      ...executor,
      target: "<= 3x",
      met: executor.ratio <= 3
    },
    {
      id: "15b",
      what: "the same through our `McpServer.stdio` to the SDK `Client` (the server's process)",
      figure: megabytes(median(figures.mcp)),
      baseline: floor,
      ...mcp,
      target: "<= 3x",
      met: mcp.ratio <= 3
    }
  ])
}

await main()
