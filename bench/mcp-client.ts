/**
 * Row 5: our `McpClient` calling the reference server's `echo` tool (`@modelcontextprotocol/server-everything` over
 * stdio) against the SDK's `Client.callTool` on a server of its own from the same package. One call at a time, so
 * the figure is the time a call takes end to end; each client keeps its server across rounds.
 *
 * Both servers are the same file run by the same `node`; ours is spawned by our transport (a process group of its
 * own, stderr kept), the SDK's by its `StdioClientTransport` (stderr ignored), which costs the servers the same per
 * call. What differs is the client's work: ours checks the arguments, sends a progress token with every call (a
 * documented behaviour), and runs the call as an Effect. Short rounds measure code V8 has not finished optimizing
 * (`--quick`: a call gets faster for its first few thousand), on both sides alike. A full run's rounds are 2,000
 * calls (300 ms): rounds of 500 (75 ms) were at the time scale of the machine's scheduling noise, three processes on
 * two cores, and their ratios spread from 0.5 to 2.8 on one machine (0.92 to 1.48 with 2,000).
 */
import { Client } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as path from "node:path"
import * as McpClient from "../src/McpClient.js"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"
import * as ToolResult from "../src/ToolResult.js"
import { root } from "./build.js"
import { interleave, median, micros, plan, quick, ratioOf, report, timed } from "./harness.js"

const SERVER = path.join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
const CALLS = quick ? 150 : 2_000
const ECHO = "echo"

const main = async () => {
  const scope = Effect.runSync(Scope.make())
  const client = await Effect.runPromise(
    Scope.extend(McpClient.connect(McpClient.stdio({ command: process.execPath, args: [SERVER] })), scope)
  )
  const found = Toolkit.lookup(await Effect.runPromise(client.toolkit), ECHO)
  if (Option.isNone(found)) throw new Error("row 5: the reference server lists no echo tool")
  const echo = found.value
  const sdk = new Client({ name: "bench", version: "1.0.0" })
  await sdk.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER], stderr: "ignore" }))

  const oursOnce = (i: number) => Tool.execute(echo, { id: `call_${i}`, arguments: { message: `hello ${i}` } })
  const first = await Effect.runPromise(oursOnce(0))
  if (Either.isLeft(first) || ToolResult.toText(first.right) !== "Echo: hello 0") {
    throw new Error(`row 5: our client got ${JSON.stringify(first)}`)
  }
  const ours = () =>
    timed(() =>
      Effect.runPromise(Effect.gen(function*() {
        for (let i = 0; i < CALLS; i++) yield* oursOnce(i)
      }))
    )
  const theirs = () =>
    timed(async () => {
      for (let i = 0; i < CALLS; i++) await sdk.callTool({ name: ECHO, arguments: { message: `hello ${i}` } })
    })
  const figures = await interleave({ ours, sdk: theirs }, { ...plan({ warmup: 2, rounds: 9 }), label: "row 5" })
  await sdk.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))

  const ratio = ratioOf(figures.ours, figures.sdk)
  report([{
    id: "5",
    what: "our `McpClient` calling `echo` on server-everything (stdio), one call at a time",
    figure: `${micros(median(figures.ours) / CALLS)}/call`,
    baseline: `SDK \`Client.callTool\` ${micros(median(figures.sdk) / CALLS)}/call`,
    ...ratio,
    target: "<= 1.15x",
    met: ratio.ratio <= 1.15
  }])
}

await main()
