/**
 * Row 10: our `McpServer.http` (stateless, a 2026-07-28 client) against the MCP SDK's own v2 server serving the
 * same tool over HTTP (`createMcpHandler` on `node:http` through `@modelcontextprotocol/node`), calls per second
 * with 16 in flight. Both servers run in processes of their own, started once; the load comes from a third process
 * (bench/loadgen-http.ts), started for each round, so neither server shares its CPU with the client.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { interleave, median, perSecond, plan, quick, ratioOf, report } from "./harness.js"

const OURS = fileURLToPath(new URL("./servers/mcp-http-ours.js", import.meta.url))
const SDK = fileURLToPath(new URL("./servers/mcp-http-sdk.js", import.meta.url))
const LOADGEN = fileURLToPath(new URL("./loadgen-http.js", import.meta.url))

const IN_FLIGHT = 16
const CALLS = quick ? 1_000 : 4_000

/** A server script started, and the URL it prints; `stop` ends it. */
const start = (script: string): Promise<{ readonly url: string; readonly stop: () => void }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      out += chunk
      const line = /^(\{.*\})$/m.exec(out)?.[1]
      if (line !== undefined) resolve({ url: (JSON.parse(line) as { url: string }).url, stop: () => child.kill() })
    })
    child.on("error", reject)
    child.on("exit", (code) => reject(new Error(`row 10: ${script} exited (${code}) before serving`)))
  })

/** One round: the load generator, a process of its own, against a URL; gives calls per second. */
const load = (url: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOADGEN, url, String(CALLS), String(IN_FLIGHT)], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      out += chunk
    })
    child.on("error", reject)
    child.on("close", (code) => {
      const rate = Number(out.trim().split("\n").pop())
      if (code !== 0 || !Number.isFinite(rate)) return reject(new Error(`row 10: the load generator failed (${code})`))
      resolve(rate)
    })
  })

const main = async () => {
  const ours = await start(OURS)
  const sdk = await start(SDK)
  try {
    const rates = await interleave({
      ours: () => load(ours.url),
      sdk: () => load(sdk.url)
    }, { ...plan({ warmup: 2, rounds: 9 }), label: "row 10" })
    const rate = ratioOf(rates.ours, rates.sdk)
    report([{
      id: "10",
      what: `our \`McpServer.http\` (stateless, 2026-07-28), ${
        CALLS.toLocaleString("en-US")
      } calls, ${IN_FLIGHT} in flight`,
      figure: perSecond(median(rates.ours)),
      baseline: `SDK \`createMcpHandler\` ${perSecond(median(rates.sdk))}`,
      ...rate,
      target: ">= 1.0x",
      met: rate.ratio >= 1
    }])
  } finally {
    ours.stop()
    sdk.stop()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
