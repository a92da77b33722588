/**
 * The MCP client and the 2026-07-28 revision, against the SDK's v2 server (which speaks it): version negotiation
 * (`server/discover`, falling back to `initialize`), questions a server asks with `input_required` (answered by the
 * host's `Elicitor` or `sampling`), change notifications on a `subscriptions/listen` stream, and a call whose
 * connection breaks: sent again only when that is safe.
 */
import { describe, expect, it } from "@effect/vitest"
import { acceptedContent, inputRequired, inputResponse, McpServer as SdkMcpServer } from "@modelcontextprotocol/server"
import { Effect, Either } from "effect"
import { fileURLToPath } from "node:url"
import * as z from "zod/v4"
import * as Elicitation from "../src/Elicitation.js"
import * as Executor from "../src/Executor.js"
import * as McpClient from "../src/McpClient.js"
import type * as Tool from "../src/Tool.js"
import * as ToolError from "../src/ToolError.js"
import * as Toolkit from "../src/Toolkit.js"
import { modelText } from "./helpers.js"
import { breakingServer, modernServer, sessionServer } from "./mcpPeers.js"

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })

const run = (kit: Toolkit.Toolkit<Tool.Tool<string>>, name: string, args: Record<string, unknown> = {}) =>
  Effect.map(Executor.run(kit, [{ id: "call_1", name, arguments: args }]), (outcomes) => outcomes[0])

/** A server with `add` (read-only), and `deploy`, which asks for a confirmation with `input_required`. */
const tools = () => {
  const server = new SdkMcpServer({ name: "modern", version: "2.0.0" })
  server.registerTool("add", {
    description: "Add two numbers",
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    annotations: { readOnlyHint: true }
  }, ({ a, b }) => text(String(a + b)))
  server.registerTool("deploy", {
    description: "Deploy, once confirmed",
    inputSchema: z.object({ env: z.string() })
  }, ({ env }, ctx) => {
    const answer = acceptedContent<{ confirm?: boolean }>(ctx.mcpReq.inputResponses, "confirm")
    if (answer?.confirm === true) return text(`deployed to ${env}`)
    if (inputResponse(ctx.mcpReq.inputResponses, "confirm").kind === "elicit") return text("not deployed")
    return inputRequired({
      inputRequests: {
        confirm: inputRequired.elicit({
          message: `Deploy to ${env}?`,
          requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] }
        })
      }
    })
  })
  server.registerTool("summarize", { description: "Ask the client's model" }, (ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, "summary")
    if (answer.kind === "sampling") {
      const content = answer.result.content
      return text(`the model said: ${!Array.isArray(content) && content.type === "text" ? content.text : "?"}`)
    }
    return inputRequired({
      inputRequests: {
        summary: inputRequired.createMessage({
          messages: [{ role: "user", content: { type: "text", text: "Summarize the release" } }],
          maxTokens: 50
        })
      }
    })
  })
  return server
}

const faultServer = fileURLToPath(new URL("./fixtures/mcp-fault-server.mjs", import.meta.url))

describe("McpClient, MCP 2026-07-28", () => {
  describe("version negotiation", () => {
    it.scopedLive("asks with server/discover, and speaks 2026-07-28 with a server that answers it", () =>
      Effect.gen(function*() {
        const server = yield* modernServer(tools)
        const client = yield* McpClient.connect(McpClient.http(server.url))
        expect(client.protocolVersion).toBe("2026-07-28")
        expect(client.serverInfo).toMatchObject({ name: "modern", version: "2.0.0" })
        expect(Toolkit.names(yield* client.toolkit)).toEqual(["add", "deploy", "summarize"])
        expect(modelText(yield* run(yield* client.toolkit, "add", { a: 2, b: 3 }))).toBe("5")
        const methods = server.requests.map((r) => (JSON.parse(r.body || "{}") as { method?: string }).method)
        expect(methods).toContain("server/discover")
        expect(methods).not.toContain("initialize")
      }))

    it.scopedLive("falls back to initialize with a server of the 2025 revisions", () =>
      Effect.gen(function*() {
        const server = yield* sessionServer(tools)
        const client = yield* McpClient.connect(McpClient.http(server.url))
        expect(client.protocolVersion).toBe("2025-11-25")
        expect(modelText(yield* run(yield* client.toolkit, "add", { a: 1, b: 1 }))).toBe("2")
      }))

    it.scopedLive("revision: legacy sends initialize only; revision: 2026-07-28 refuses a server without it", () =>
      Effect.gen(function*() {
        const modern = yield* modernServer(tools)
        const legacy = yield* McpClient.connect(McpClient.http(modern.url), { revision: "legacy" })
        expect(legacy.protocolVersion).toBe("2025-11-25")
        expect(modern.requests.some((r) => r.body.includes("server/discover"))).toBe(false)
        const old = yield* sessionServer(tools)
        const error = yield* Effect.flip(
          Effect.scoped(McpClient.connect(McpClient.http(old.url), { revision: "2026-07-28" }))
        )
        expect(error.reason).toBe("Initialize")
      }))

    it.live("over stdio, a server of the 2025 revisions is asked with initialize after the probe", () =>
      Effect.scoped(Effect.gen(function*() {
        const client = yield* McpClient.connect(
          McpClient.stdio({ command: process.execPath, args: [faultServer, "serve"], killGrace: "300 millis" })
        )
        expect(client.protocolVersion).toBe("2025-11-25")
        expect(modelText(yield* run(yield* client.toolkit, "echo", { text: "hi" }))).toBe("hi")
      })))

    it.live("over stdio, a server that exits on the probe is started again and asked with initialize", () =>
      Effect.scoped(Effect.gen(function*() {
        const client = yield* McpClient.connect(
          McpClient.stdio({ command: process.execPath, args: [faultServer, "strict"], killGrace: "300 millis" })
        )
        expect(client.protocolVersion).toBe("2025-11-25")
        expect(modelText(yield* run(yield* client.toolkit, "echo", { text: "again" }))).toBe("again")
      })))
  })

  describe("input_required", () => {
    it.scopedLive("the host's Elicitor answers the server's question, and the call is sent again with the answer", () =>
      Effect.gen(function*() {
        const server = yield* modernServer(tools)
        const asked: Array<Elicitation.Request> = []
        const client = yield* McpClient.connect(McpClient.http(server.url)).pipe(
          Effect.provide(Elicitation.layer((request) => {
            asked.push(request)
            return Effect.succeed(Elicitation.accept({ confirm: true }))
          }))
        )
        expect(client.protocolVersion).toBe("2026-07-28")
        expect(modelText(yield* run(yield* client.toolkit, "deploy", { env: "prod" }))).toBe("deployed to prod")
        expect(asked.map((request) => request.message)).toEqual(["Deploy to prod?"])
      }))

    it.scopedLive("without an Elicitor the question is answered cancel", () =>
      Effect.gen(function*() {
        const server = yield* modernServer(tools)
        const client = yield* McpClient.connect(McpClient.http(server.url))
        const outcome = yield* run(yield* client.toolkit, "deploy", { env: "prod" })
        // the client declares no elicitation: the server may not ask, and says so
        expect(Either.isLeft(outcome) || modelText(outcome) === "not deployed").toBe(true)
      }))

    it.scopedLive("`sampling` answers the server's request for a completion", () =>
      Effect.gen(function*() {
        const server = yield* modernServer(tools)
        const client = yield* McpClient.connect(McpClient.http(server.url), {
          sampling: (request) =>
            Effect.succeed({
              role: "assistant",
              content: { type: "text", text: `read ${request.messages.length} message, ${request.maxTokens} tokens` },
              model: "canned-1"
            })
        })
        expect(modelText(yield* run(yield* client.toolkit, "summarize"))).toBe(
          "the model said: read 1 message, 50 tokens"
        )
      }))
  })

  describe("tool changes", () => {
    it.scopedLive("come on a subscriptions/listen stream, and the client follows them", () =>
      Effect.gen(function*() {
        let unlocked = false
        const server: { notify?: { toolsChanged(): void } } = {}
        const modern = yield* modernServer(() => {
          const mcp = new SdkMcpServer({ name: "vault", version: "1.0.0" })
          mcp.registerTool("unlock", {}, () => {
            unlocked = true
            server.notify?.toolsChanged()
            return text("unlocked")
          })
          if (unlocked) mcp.registerTool("secret", {}, () => text("the secret"))
          return mcp
        })
        server.notify = modern.notify
        const client = yield* McpClient.connect(McpClient.http(modern.url))
        expect(client.protocolVersion).toBe("2026-07-28")
        expect(modelText(yield* run(yield* client.toolkit, "unlock"))).toBe("unlocked")
        const names = Effect.map(client.toolkit, Toolkit.names)
        for (let i = 0; i < 200 && !(yield* names).includes("secret"); i++) yield* Effect.sleep("10 millis")
        expect(yield* names).toEqual(["unlock", "secret"])
        const listens = modern.requests.filter((r) => r.body.includes("subscriptions/listen"))
        expect(listens.length).toBe(1)
      }))
  })

  describe("a broken connection", () => {
    /** A server per request (2026-07-28 is stateless) over one counter. */
    const counters = () => {
      let count = 0
      return () => {
        const server = new SdkMcpServer({ name: "counters", version: "1.0.0" })
        server.registerTool("read", { annotations: { readOnlyHint: true } }, () => text(`read ${count}`))
        server.registerTool("put", { annotations: { idempotentHint: true } }, () => text("put"))
        server.registerTool("increment", {}, () => text(`now ${++count}`))
        server.registerTool("survey", { annotations: { readOnlyHint: true } }, async (ctx) => {
          // progress first: the answer becomes a stream
          const progressToken = ctx.mcpReq._meta?.progressToken
          if (progressToken !== undefined) {
            await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken, progress: 1 } })
          }
          await new Promise((resolve) => setTimeout(resolve, 20))
          return text("surveyed")
        })
        return server
      }
    }

    it.scopedLive("a call the server marks read-only or idempotent is sent again, once", () =>
      Effect.gen(function*() {
        const { ran, url } = yield* breakingServer(counters())
        const client = yield* McpClient.connect(McpClient.http(url))
        expect(modelText(yield* run(yield* client.toolkit, "read"))).toBe("read 0")
        expect(modelText(yield* run(yield* client.toolkit, "put"))).toBe("put")
        expect(ran).toEqual(["read", "read", "put", "put"])
      }))

    it.scopedLive("so is one whose answer's stream ended without the answer", () =>
      Effect.gen(function*() {
        const { ran, url } = yield* breakingServer(counters())
        const client = yield* McpClient.connect(McpClient.http(url), { timeout: "30 seconds" })
        const started = Date.now()
        expect(modelText(yield* run(yield* client.toolkit, "survey"))).toBe("surveyed")
        expect(ran).toEqual(["survey", "survey"])
        // at once, not after the request's timeout
        expect(Date.now() - started).toBeLessThan(10_000)
      }))

    it.scopedLive("any other call fails, saying it may have run, and is not sent again", () =>
      Effect.gen(function*() {
        const { ran, url } = yield* breakingServer(counters())
        const client = yield* McpClient.connect(McpClient.http(url))
        const outcome = yield* run(yield* client.toolkit, "increment")
        expect(Either.isLeft(outcome)).toBe(true)
        const error = (outcome as Either.Left<ToolError.ToolError, unknown>).left
        expect(error._tag).toBe("ToolFailure")
        expect(((error as ToolError.ToolFailure).error as McpClient.McpClientError).reason).toBe("Broken")
        expect(ToolError.toModelText(error)).toMatch(
          /^Error: the connection to the MCP server "counters" broke before it answered: the call may have run there/
        )
        expect(ran).toEqual(["increment"])
      }))

    it.scopedLive("replay: safe, the host's word, is enough", () =>
      Effect.gen(function*() {
        const { ran, url } = yield* breakingServer(counters())
        const client = yield* McpClient.connect(McpClient.http(url), { replay: { increment: "safe" } })
        const kit = yield* client.toolkit
        expect(Toolkit.lookup(kit, "increment")).toMatchObject({ _tag: "Some", value: { replay: "safe" } })
        expect(modelText(yield* run(kit, "increment"))).toBe("now 2")
        expect(ran).toEqual(["increment", "increment"])
      }))
  })
})
