/**
 * What the conformance client does in each client scenario it plays (see ./client.ts, which runs this module): a
 * host on `McpClient`, connecting to the scenario's server over Streamable HTTP, at the revision the suite asks for
 * (`MCP_CONFORMANCE_PROTOCOL_VERSION`: `2026-07-28` negotiates it with `server/discover`; a 2025 revision sends
 * `initialize` alone).
 *
 * - `initialize`, `request-metadata`, `json-schema-*`: connect (the handshake, the tool list) and close;
 * - `tools_call`: call `add_numbers` through the executor;
 * - `elicitation-sep1034-client-defaults`: the server asks for a form and the `Elicitor` accepts it as offered, so
 *   the client fills in the form's defaults (SEP-1034);
 * - `sse-retry`: call `test_reconnection`, whose stream the server closes mid-call (the SDK transport reconnects
 *   with `Last-Event-ID`, and the answer comes on the new stream);
 * - `sep-2322-client-request-state`: the `input_required` round trips of 2026-07-28, answered by the `Elicitor`;
 * - `http-*`: every tool the server lists (or the calls the suite names), with the headers 2026-07-28 asks for; a
 *   tool whose `x-mcp-header` declarations break the rules is not even listed;
 * - `auth/*`: the same host signing in with `McpAuth.oauth` (a browser that approves at once: it reads the
 *   authorization server's redirect instead of loading it), with a client ID metadata document's URL, or the
 *   pre-registered client the suite gives; the client-credentials extensions with the SDK's own providers.
 *
 * Exits 0 when every call succeeded, 1 otherwise (a scenario that expects the client to refuse, an issuer that does
 * not match say, passes on the exit code 1).
 */
// Modules by path rather than index files: the suite starts this program once per scenario, and the index files
// (of effect, of this library) take most of its start-up time under tsx.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from "@modelcontextprotocol/client"
import type { OAuthClientProvider } from "@modelcontextprotocol/client"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Elicitation from "../../src/Elicitation.js"
import * as Executor from "../../src/Executor.js"
import * as McpAuth from "../../src/McpAuth.js"
import * as McpClient from "../../src/McpClient.js"
import type * as Tool from "../../src/Tool.js"
import * as ToolDefinition from "../../src/ToolDefinition.js"
import * as ToolError from "../../src/ToolError.js"
import * as Toolkit from "../../src/Toolkit.js"
import * as ToolResult from "../../src/ToolResult.js"
import type { Played } from "./played.js"

/**
 * The calls a scenario makes: fixed ones; every tool the server lists, with these arguments; or `echo` with the
 * JSON Schema this client offers for another tool (what it kept of the server's).
 */
type Calls =
  | ReadonlyArray<readonly [string, Record<string, unknown>]>
  | { readonly every: Record<string, unknown> }
  | { readonly echo: string; readonly schemaOf: string }

const everyTool: Calls = { every: {} }

const isFixed = (calls: Calls): calls is ReadonlyArray<readonly [string, Record<string, unknown>]> =>
  Array.isArray(calls)

/** What the client does per scenario: its calls, and how it signs in. */
interface Play {
  readonly calls: Calls
  readonly auth?: "oauth" | "pre-registered" | "client-credentials" | undefined
}

const connectOnly: Play = { calls: [] }
const oauth: Play = { calls: everyTool, auth: "oauth" }

/** Every scenario the client plays (./played.ts names them, so the two cannot disagree). */
export const plays: { readonly [Name in Played]: Play } = {
  "initialize": connectOnly,
  "tools_call": { calls: [["add_numbers", { a: 5, b: 3 }]] },
  "elicitation-sep1034-client-defaults": { calls: [["test_client_elicitation_defaults", {}]] },
  "sse-retry": { calls: [["test_reconnection", {}]] },
  "request-metadata": connectOnly,
  "sep-2322-client-request-state": {
    calls: [
      ["test_mrtr_echo_state", {}],
      ["test_mrtr_no_state", {}],
      ["test_mrtr_unrelated", {}],
      ["test_mrtr_no_result_type", {}]
    ]
  },
  "http-standard-headers": { calls: everyTool },
  "http-custom-headers": { calls: everyTool },
  // the one valid tool takes a region; the others must not even be listed
  "http-invalid-tool-headers": { calls: { every: { region: "us-west1" } } },
  "json-schema-ref-no-deref": connectOnly,
  "json-schema-2020-12-preservation": { calls: { echo: "json_schema_echo", schemaOf: "json_schema_2020_12_tool" } },
  "auth/metadata-default": oauth,
  "auth/metadata-var1": oauth,
  "auth/metadata-var2": oauth,
  "auth/metadata-var3": oauth,
  "auth/basic-cimd": oauth,
  "auth/scope-from-www-authenticate": oauth,
  "auth/scope-from-scopes-supported": oauth,
  "auth/scope-omitted-when-undefined": oauth,
  "auth/scope-step-up": oauth,
  "auth/scope-retry-limit": oauth,
  "auth/token-endpoint-auth-basic": oauth,
  "auth/token-endpoint-auth-post": oauth,
  "auth/token-endpoint-auth-none": oauth,
  "auth/pre-registration": { calls: everyTool, auth: "pre-registered" },
  "auth/2025-03-26-oauth-metadata-backcompat": oauth,
  "auth/2025-03-26-oauth-endpoint-fallback": oauth,
  "auth/resource-mismatch": oauth,
  "auth/offline-access-scope": oauth,
  "auth/offline-access-not-supported": oauth,
  "auth/authorization-server-migration": oauth,
  "auth/iss-supported": oauth,
  "auth/iss-not-advertised": oauth,
  "auth/iss-supported-missing": oauth,
  "auth/iss-wrong-issuer": oauth,
  "auth/iss-unexpected": oauth,
  "auth/iss-normalized": oauth,
  "auth/metadata-issuer-mismatch": oauth,
  "auth/client-credentials-basic": { calls: [], auth: "client-credentials" },
  "auth/client-credentials-jwt": { calls: [], auth: "client-credentials" }
}

/** The client ID metadata document the suite's authorization servers accept (they do not fetch it). */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"

/** Someone who accepts every form as it is offered, defaults and all, and confirms what is asked. */
const AcceptAsOffered = Elicitation.layer((request) =>
  Effect.succeed(
    Elicitation.accept(request.requestedSchema?.properties.confirmed === undefined ? {} : { confirmed: true })
  )
)

/** A browser that approves at once: it opens the authorization page and reads where it is sent back. */
const approvingBrowser: McpAuth.Redirect = {
  url: new URL("http://localhost:3000/callback"),
  authorize: (request) =>
    Effect.tryPromise({
      try: async () => {
        const response = await fetch(request.url, { redirect: "manual" })
        const location = response.headers.get("location")
        if (location === null) throw new Error(`the authorization page answered ${response.status}, not a redirect`)
        return new URL(location).searchParams
      },
      catch: (error) => new McpAuth.McpAuthError({ reason: "Redirect", message: String(error) })
    })
}

/** What the suite passes a scenario that needs it (the pre-registered client, the client credentials). */
const context = (): Record<string, string> => JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}")

const authFor = (play: Play): McpAuth.OAuth | OAuthClientProvider | undefined => {
  switch (play.auth) {
    case undefined:
      return undefined
    case "oauth":
      return McpAuth.oauth({ redirect: approvingBrowser, clientMetadataUrl: CLIENT_METADATA_URL })
    case "pre-registered": {
      const { client_id, client_secret } = context()
      return McpAuth.oauth({ redirect: approvingBrowser, client: { id: client_id, secret: client_secret } })
    }
    case "client-credentials": {
      const given = context()
      return given.private_key_pem === undefined
        ? new ClientCredentialsProvider({ clientId: given.client_id, clientSecret: given.client_secret })
        : new PrivateKeyJwtProvider({
          clientId: given.client_id,
          privateKey: given.private_key_pem,
          algorithm: given.signing_algorithm ?? "ES256"
        })
    }
  }
}

const callsOf = (calls: Calls, kit: Toolkit.Toolkit<Tool.Dynamic>): ReadonlyArray<Executor.ToolCall> => {
  if (isFixed(calls)) return calls.map(([name, args], i) => ({ id: `call_${i}`, name, arguments: args }))
  if ("echo" in calls) {
    const offered = Toolkit.lookup(kit, calls.schemaOf)
    const schema = Option.isSome(offered) ? ToolDefinition.mcp(offered.value).inputSchema : {}
    return [{ id: "call_0", name: calls.echo, arguments: { schema } }]
  }
  return kit.tools.map((tool, i) => ({ id: `call_${i}`, name: tool.name, arguments: calls.every }))
}

const play = (url: string, scenario: string) =>
  Effect.gen(function*() {
    const scenarioPlay = plays[scenario as Played]
    const revision = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION
    const client = yield* McpClient.connect(McpClient.http(url, { auth: authFor(scenarioPlay) }), {
      clientInfo: { name: "effect-agent-tools-conformance", version: "0.1.0" },
      revision: revision === undefined || revision === "2026-07-28" ? "auto" : "legacy"
    })
    yield* Console.log(`connected: MCP ${client.protocolVersion}`)
    const kit = yield* client.toolkit
    // the calls the suite names for a scenario, when it names them
    const named = (JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as {
      toolCalls?: ReadonlyArray<{ name: string; arguments: Record<string, unknown> }>
    }).toolCalls
    const calls = named === undefined
      ? callsOf(scenarioPlay.calls, kit)
      : named.map((call, i) => ({ id: `call_${i}`, name: call.name, arguments: call.arguments }))
    const outcomes = yield* Executor.run(kit, calls)
    let failed = false
    for (const [i, outcome] of outcomes.entries()) {
      const text = Either.match(outcome, { onLeft: ToolError.toModelText, onRight: ToolResult.toText })
      yield* Console.log(`${calls[i].name}: ${text}`)
      if (Either.isLeft(outcome)) {
        failed = true
        // what a failure came from, for the suite's stderr.txt
        const cause = (outcome.left as { readonly error?: { readonly cause?: unknown } }).error?.cause
        if (cause !== undefined) yield* Console.error(`${calls[i].name}: caused by`, cause)
      }
    }
    if (failed) return yield* Effect.fail(`a call of scenario ${JSON.stringify(scenario)} failed`)
  }).pipe(Effect.scoped, Effect.provide(AcceptAsOffered))

/** Plays a scenario against the server at `url`, then exits. */
export const main = (url: string, scenario: string): void => NodeRuntime.runMain(play(url, scenario))
