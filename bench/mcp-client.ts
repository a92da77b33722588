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
 * two cores, and their ratios spread from 0.5 to 2.8 on one machine (0.92 to 1.48 with 2,000). Even so a round's
 * ratio moves by about a tenth, which puts the median of 9 rounds 0.05 either side of where 30 rounds settle (the
 * same code: 1.07x to 1.16x in five runs of 9 rounds, 1.03x to 1.08x in three of 30), so a full run takes 21.
 *
 * Row 5b is the clients' own work, without the server and the scheduler: the same calls to an in-process peer
 * ({@link EchoPeer}) that answers at once. It has no target; a change of the client's own path is a tenth of its
 * figure where it is a few hundredths of row 5's, inside that row's noise. Part of our figure is the progress token
 * every call of ours carries (the SDK's `callTool` sends none unless given `onprogress`: about 2 µs a call).
 */
import { Client } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as path from "node:path"
import type { JSONRPCMessage, Transport } from "../src/internal/mcpSdk.js"
import * as McpClient from "../src/McpClient.js"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"
import * as ToolResult from "../src/ToolResult.js"
import { root } from "./build.js"
import { interleave, median, micros, plan, quick, ratioOf, report, timed } from "./harness.js"

const SERVER = path.join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
const CALLS = quick ? 150 : 2_000
const ECHO = "echo"
/** Row 5b's calls a round: a call there takes a tenth of row 5's. */
const LOCAL_CALLS = quick ? 1_000 : 10_000

/** server-everything's `echo`, as it lists it. */
const echoTool = {
  name: ECHO,
  description: "Echoes back the input string",
  inputSchema: {
    type: "object",
    properties: { message: { type: "string", description: "Message to echo" } },
    required: ["message"]
  }
}

/**
 * A 2025-revision MCP server in the client's process, serving `echo` as server-everything does: each message
 * crosses as JSON text, and each answer arrives in a macrotask of its own, as a line from a pipe does; the server's
 * work is next to nothing, so a call's time is the client's own.
 */
class EchoPeer implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined

  start(): Promise<void> {
    return Promise.resolve()
  }

  close(): Promise<void> {
    this.onclose?.()
    return Promise.resolve()
  }

  send(message: JSONRPCMessage): Promise<void> {
    const request = JSON.parse(JSON.stringify(message)) as {
      readonly id?: string | number
      readonly method?: string
      readonly params?: { readonly protocolVersion?: string; readonly arguments?: { readonly message?: string } }
    }
    if (request.id === undefined || request.method === undefined) return Promise.resolve()
    const answer = (body: object) => {
      const line = JSON.stringify({ ...body, jsonrpc: "2.0", id: request.id })
      setImmediate(() => this.onmessage?.(JSON.parse(line) as JSONRPCMessage))
    }
    switch (request.method) {
      case "initialize":
        answer({
          result: {
            protocolVersion: request.params?.protocolVersion,
            capabilities: { tools: { listChanged: true } },
            serverInfo: { name: "echo-peer", version: "1.0.0" }
          }
        })
        break
      case "tools/list":
        answer({ result: { tools: [echoTool] } })
        break
      case "tools/call":
        answer({ result: { content: [{ type: "text", text: `Echo: ${request.params?.arguments?.message}` }] } })
        break
      default:
        // `server/discover` among them: a server of the 2025 revisions, as server-everything is
        answer({ error: { code: -32601, message: "Method not found" } })
    }
    return Promise.resolve()
  }
}

/** The `echo` tool of a connected client of ours. */
const echoOf = async (client: McpClient.McpClient, row: string): Promise<Tool.Dynamic> => {
  const found = Toolkit.lookup(await Effect.runPromise(client.toolkit), ECHO)
  if (Option.isNone(found)) throw new Error(`row ${row}: the server lists no echo tool`)
  return found.value
}

const callOurs = (echo: Tool.Dynamic, i: number) =>
  Tool.execute(echo, { id: `call_${i}`, arguments: { message: `hello ${i}` } })

/** Both sides answer `Echo: hello 0` to a first call: a broken variant must not look fast. */
const checkBoth = async (echo: Tool.Dynamic, sdk: Client, row: string): Promise<void> => {
  const ours = await Effect.runPromise(callOurs(echo, 0))
  if (Either.isLeft(ours) || ToolResult.toText(ours.right) !== "Echo: hello 0") {
    throw new Error(`row ${row}: our client got ${JSON.stringify(ours)}`)
  }
  const theirs = await sdk.callTool({ name: ECHO, arguments: { message: "hello 0" } })
  const text = (theirs.content as ReadonlyArray<{ readonly text?: unknown }> | undefined)?.[0]?.text
  if (text !== "Echo: hello 0") throw new Error(`row ${row}: the SDK client got ${JSON.stringify(theirs)}`)
}

/** A round of each side: `calls` calls of `echo`, one at a time, through our tool and through the SDK's client. */
const rounds = (echo: Tool.Dynamic, sdk: Client, calls: number) => ({
  ours: () =>
    timed(() =>
      Effect.runPromise(Effect.gen(function*() {
        for (let i = 0; i < calls; i++) yield* callOurs(echo, i)
      }))
    ),
  sdk: () =>
    timed(async () => {
      for (let i = 0; i < calls; i++) await sdk.callTool({ name: ECHO, arguments: { message: `hello ${i}` } })
    })
})

const main = async () => {
  const scope = Effect.runSync(Scope.make())
  const client = await Effect.runPromise(
    Scope.extend(McpClient.connect(McpClient.stdio({ command: process.execPath, args: [SERVER] })), scope)
  )
  const echo = await echoOf(client, "5")
  const sdk = new Client({ name: "bench", version: "1.0.0" })
  await sdk.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER], stderr: "ignore" }))
  await checkBoth(echo, sdk, "5")
  const figures = await interleave(rounds(echo, sdk, CALLS), { ...plan({ warmup: 2, rounds: 21 }), label: "row 5" })
  await sdk.close()

  const localEcho = await echoOf(await Effect.runPromise(Scope.extend(McpClient.connect(new EchoPeer()), scope)), "5b")
  const localSdk = new Client({ name: "bench", version: "1.0.0" })
  await localSdk.connect(new EchoPeer())
  await checkBoth(localEcho, localSdk, "5b")
  const local = await interleave(rounds(localEcho, localSdk, LOCAL_CALLS), {
    ...plan({ warmup: 3, rounds: 15 }),
    label: "row 5b"
  })
  await localSdk.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))

  const ratio = ratioOf(figures.ours, figures.sdk)
  const localRatio = ratioOf(local.ours, local.sdk)
  report([{
    id: "5",
    what: "our `McpClient` calling `echo` on server-everything (stdio), one call at a time",
    figure: `${micros(median(figures.ours) / CALLS)}/call`,
    baseline: `SDK \`Client.callTool\` ${micros(median(figures.sdk) / CALLS)}/call`,
    ...ratio,
    target: "<= 1.15x",
    met: ratio.ratio <= 1.15
  }, {
    id: "5b",
    what: "the same calls' client work: `echo` on an in-process peer that answers at once",
    figure: `${micros(median(local.ours) / LOCAL_CALLS)}/call`,
    baseline: `SDK \`Client.callTool\` ${micros(median(local.sdk) / LOCAL_CALLS)}/call`,
    ...localRatio,
    target: "-",
    met: null
  }])
}

await main()
