/**
 * Row 7: `StdioProvider` both sides (our host, `StdioProvider.connect`, driving `Executor.run` with 16 calls in
 * flight; our provider, `StdioProvider.main`, compiled JavaScript run by `node`) against row 4's MCP stdio figure,
 * measured again here, interleaved: the SDK `Client` with 16 calls in flight on our `McpServer`.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { fileURLToPath } from "node:url"
import * as Executor from "../src/Executor.js"
import * as StdioProvider from "../src/StdioProvider.js"
import * as Fixtures from "./fixtures.js"
import { interleave, median, perSecond, plan, quick, ratioOf, report, timed } from "./harness.js"
import { burst, connect, OURS } from "./mcp-server.js"

const PROVIDER = fileURLToPath(new URL("./servers/provider.js", import.meta.url))
const IN_FLIGHT = 16
const CALLS = quick ? 1_000 : 10_000

const main = async () => {
  const scope = Effect.runSync(Scope.make())
  const provider = await Effect.runPromise(
    Scope.extend(StdioProvider.connect({ command: process.execPath, args: [PROVIDER] }), scope)
  )
  const calls = Fixtures.validCalls(CALLS)
  const batch = Executor.run(Effect.runSync(provider.toolkit), calls, { maxParallel: IN_FLIGHT })
  const outcomes = await Effect.runPromise(batch)
  if (!outcomes.every((o) => Either.isRight(o))) throw new Error("row 7: a call failed")
  const mcp = await connect(OURS)

  const figures = await interleave({
    stdio: async () => CALLS / ((await timed(() => Effect.runPromise(batch))) / 1000),
    mcp: () => burst(mcp, CALLS, IN_FLIGHT)
  }, { ...plan({ warmup: 1, rounds: 5 }), label: "row 7" })
  await mcp.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))

  const ratio = ratioOf(figures.stdio, figures.mcp)
  report([{
    id: "7",
    what: `\`StdioProvider\` host and provider, ${CALLS.toLocaleString("en-US")} calls, ${IN_FLIGHT} in flight`,
    figure: perSecond(median(figures.stdio)),
    baseline: `row 4's MCP stdio (our server) ${perSecond(median(figures.mcp))}`,
    ...ratio,
    target: ">= 1.0x",
    met: ratio.ratio >= 1
  }])
}

await main()
