/**
 * The MCP client against the reference server, `@modelcontextprotocol/server-everything` (a dev dependency, run
 * offline with this Node over stdio): its tools listed and prefixed, every kind of answer it gives mapped, bad
 * arguments refused before they leave the process, progress as executor events, and cancellation.
 *
 * One session serves the whole file (starting the server costs about a second).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Exit, Fiber, Scope, Stream } from "effect"
import * as Executor from "../../src/Executor.js"
import * as McpClient from "../../src/McpClient.js"
import type * as Tool from "../../src/Tool.js"
import * as ToolError from "../../src/ToolError.js"
import * as Toolkit from "../../src/Toolkit.js"
import * as ToolResult from "../../src/ToolResult.js"
import * as peers from "./peers.js"

let scope: Scope.CloseableScope
let client: McpClient.McpClient
let kit: Toolkit.Toolkit<Tool.Tool<string>>

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  client = await Effect.runPromise(
    Scope.extend(
      McpClient.connect(McpClient.stdio({ command: process.execPath, args: [peers.serverEverything] }), {
        prefix: "every"
      }),
      scope
    )
  )
  kit = await Effect.runPromise(client.toolkit)
})

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})

const call = (name: string, args: Record<string, unknown>) =>
  Effect.map(Executor.run(kit, [{ id: "call_1", name, arguments: JSON.stringify(args) }]), (outcomes) => outcomes[0])

const success = (outcome: Executor.Outcome): ToolResult.ToolResult => {
  if (Either.isLeft(outcome)) throw new Error(ToolError.toModelText(outcome.left))
  return outcome.right
}

describe("McpClient against server-everything", () => {
  it("says who it is and lists its tools, prefixed, with their schemas and hints", () => {
    expect(client.serverInfo.name).toBe("mcp-servers/everything")
    expect(client.instructions).toContain("Everything")
    const names = Toolkit.names(kit)
    for (
      const name of ["echo", "get-tiny-image", "get-structured-content", "trigger-long-running-operation", "get-sum"]
    ) {
      expect(names).toContain(`every__${name}`)
    }
    const echo = Toolkit.lookup(kit, "every__echo")
    expect(echo._tag).toBe("Some")
    if (echo._tag === "Some") {
      expect(JSON.stringify(echo.value.inputSchema)).toContain("\"message\"")
      expect(echo.value.annotations).toEqual({ readOnly: true, destructive: false, idempotent: true, openWorld: false })
    }
  })

  it.live("echo answers text", () =>
    Effect.gen(function*() {
      const result = success(yield* call("every__echo", { message: "hello" }))
      expect(ToolResult.toText(result)).toContain("hello")
    }))

  it.live("the tiny image comes back as an image part, not as text", () =>
    Effect.gen(function*() {
      const result = success(yield* call("every__get-tiny-image", {}))
      const images = result.content.filter((part) => part.type === "image")
      expect(images).toHaveLength(1)
      expect(images[0]).toMatchObject({ type: "image", mimeType: "image/png" })
      expect(Buffer.from((images[0] as { data: string }).data, "base64").subarray(1, 4).toString()).toBe("PNG")
    }))

  it.live("structured content becomes `structured`", () =>
    Effect.gen(function*() {
      const result = success(yield* call("every__get-structured-content", { location: "Chicago" }))
      expect(result.structured).toMatchObject({ temperature: expect.any(Number) })
      expect(ToolResult.toText(result)).toContain("temperature")
    }))

  it.live("invalid arguments are refused here, with our wording, before anything is sent", () =>
    Effect.gen(function*() {
      const outcome = yield* call("every__get-sum", { a: "x" })
      expect(Either.isLeft(outcome)).toBe(true)
      if (Either.isLeft(outcome)) {
        expect(outcome.left._tag).toBe("InvalidArguments")
        expect(ToolError.toModelText(outcome.left)).toBe(
          "Error: invalid arguments: b: missing required property, expected a number\na: expected a number, got \"x\""
        )
      }
      expect(ToolResult.toText(success(yield* call("every__get-sum", { a: 2, b: 3 })))).toContain("5")
    }))

  it.live("a long-running operation's progress arrives as Progress events, before its result", () =>
    Effect.gen(function*() {
      const events = Chunk.toArray(
        yield* Stream.runCollect(Executor.stream(kit, [{
          id: "long",
          name: "every__trigger-long-running-operation",
          arguments: { duration: 1, steps: 3 }
        }]))
      )
      expect(events.map((event) => event._tag === "Progress" ? event.progress : event._tag)).toEqual([
        "Started",
        { progress: 1, total: 3 },
        { progress: 2, total: 3 },
        { progress: 3, total: 3 },
        "Finished"
      ])
      const finished = events[events.length - 1]
      expect(finished._tag === "Finished" && ToolResult.toText(success(finished.outcome))).toContain("completed")
    }))

  it.scopedLive("cancelling a call ends it at once with ToolInterrupted; the session carries on", () =>
    Effect.gen(function*() {
      const batch = yield* Executor.start(kit, [{
        id: "long",
        name: "every__trigger-long-running-operation",
        arguments: { duration: 10, steps: 10 }
      }])
      const events: Array<Executor.ToolEvent> = []
      const consumer = yield* Effect.fork(
        Stream.runForEach(batch.events, (event) => Effect.sync(() => events.push(event)))
      )
      // the first step ends a second in: the call is under way on the server
      while (!events.some((event) => event._tag === "Progress")) yield* Effect.sleep("20 millis")
      const started = Date.now()
      yield* batch.cancel("long")
      yield* Fiber.join(consumer)
      expect(Date.now() - started).toBeLessThan(1_000)
      const finished = events.find((event) => event._tag === "Finished")
      expect(finished?._tag === "Finished" && Either.isLeft(finished.outcome) && finished.outcome.left._tag).toBe(
        "ToolInterrupted"
      )
      expect(ToolResult.toText(success(yield* call("every__echo", { message: "after" })))).toContain("after")
    }))
})
