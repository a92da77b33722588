/**
 * What the conformance client does in each client scenario it plays (see ./client.ts, which runs this module):
 * a host on `McpClient`, connecting to the scenario's server over Streamable HTTP.
 * - `initialize`: connect (initialize, list the tools) and close;
 * - `tools_call`: call `add_numbers` through the executor;
 * - `elicitation-sep1034-client-defaults`: call `test_client_elicitation_defaults`; the server asks for a form, and
 *   the `Elicitor` accepts it as offered, so the client fills in the form's defaults (SEP-1034);
 * - `sse-retry`: call `test_reconnection`, whose stream the server closes mid-call (the SDK transport reconnects
 *   after the server's `retry`, with `Last-Event-ID`, and the answer comes on the new stream).
 *
 * Exits 0 when every call succeeded, 1 otherwise.
 */
// Modules by path rather than index files: the suite starts this program once per scenario, and the index files
// (of effect, of this library) take most of its start-up time under tsx.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Elicitation from "../../src/Elicitation.js"
import * as Executor from "../../src/Executor.js"
import * as McpClient from "../../src/McpClient.js"
import * as ToolError from "../../src/ToolError.js"
import * as ToolResult from "../../src/ToolResult.js"

/** The calls each scenario makes: tool name and arguments. */
export const scenarios: Readonly<Record<string, ReadonlyArray<readonly [string, Record<string, unknown>]>>> = {
  "initialize": [],
  "tools_call": [["add_numbers", { a: 5, b: 3 }]],
  "elicitation-sep1034-client-defaults": [["test_client_elicitation_defaults", {}]],
  "sse-retry": [["test_reconnection", {}]]
}

/** Someone who accepts every form as it is offered, defaults and all, and opens every page. */
const AcceptAsOffered = Elicitation.layer(() => Effect.succeed(Elicitation.accept({})))

const play = (url: string, scenario: string) =>
  Effect.gen(function*() {
    const client = yield* McpClient.connect(McpClient.http(url), {
      clientInfo: { name: "effect-agent-tools-conformance", version: "0.1.0" }
    })
    const kit = yield* client.toolkit
    const calls = (scenarios[scenario] ?? []).map(([name, args], i) => ({ id: `call_${i}`, name, arguments: args }))
    const outcomes = yield* Executor.run(kit, calls)
    let failed = false
    for (const [i, outcome] of outcomes.entries()) {
      const text = Either.match(outcome, { onLeft: ToolError.toModelText, onRight: ToolResult.toText })
      yield* Console.log(`${calls[i].name}: ${text}`)
      if (Either.isLeft(outcome)) failed = true
    }
    if (failed) return yield* Effect.fail(`a call of scenario ${JSON.stringify(scenario)} failed`)
  }).pipe(Effect.scoped, Effect.provide(AcceptAsOffered))

/** Plays a scenario against the server at `url`, then exits. */
export const main = (url: string, scenario: string): void => NodeRuntime.runMain(play(url, scenario))
