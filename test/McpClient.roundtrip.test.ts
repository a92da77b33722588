/**
 * Our client against our own server, in memory and over Streamable HTTP: what a local tool gives is what the
 * remote tool gives (every content type, structured output, records, failures as the model reads them, hints,
 * progress), and a tool that changes the served toolkit returns with the new tools already listed by the client
 * (over HTTP, from the first change the client sees announced after its result).
 * The two directions of the mapping (`toCallToolResult`, `fromCallToolResult`) are pinned against each other here.
 */
import { describe, expect, it } from "@effect/vitest"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Chunk, Effect, Either, Option, Schema, Stream, SubscriptionRef } from "effect"
import type * as Scope from "effect/Scope"
import * as Executor from "../src/Executor.js"
import * as McpClient from "../src/McpClient.js"
import * as McpServer from "../src/McpServer.js"
import * as Recorder from "../src/Recorder.js"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"
import * as ToolResult from "../src/ToolResult.js"
import { modelText } from "./helpers.js"

const everyPart: ReadonlyArray<ToolResult.Content> = [
  { type: "text", text: "hello", annotations: { audience: ["assistant"], priority: 1 } },
  { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
  { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
  { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "notes" } },
  { type: "resource", resource: { uri: "file:///blob.bin", mimeType: "application/octet-stream", blob: "AAEC" } },
  { type: "resource_link", uri: "file:///readme.md", name: "readme.md", description: "The readme", size: 42 }
]

class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { path: Schema.String }) {
  override get message() {
    return `no such file: ${this.path}`
  }
}

const Parts = Tool.make("parts", {
  description: "Every kind of content, and a record",
  annotations: { readOnly: true, title: "Parts" },
  handler: () =>
    Effect.succeed(
      ToolResult.withDetails(
        ToolResult.parts(everyPart),
        new Recorder.Record({ namespace: "test/handle", data: { pgid: Number.MAX_SAFE_INTEGER, path: "a\nb" } })
      )
    )
})

const Stats = Tool.make("stats", {
  description: "Count lines",
  parameters: { text: Schema.String },
  success: Schema.Struct({ lines: Schema.Int }),
  handler: ({ text }) => Effect.succeed({ lines: text.split("\n").length })
})

const Fail = Tool.make("fail", {
  description: "Fails",
  failure: NotFound,
  handler: () => Effect.fail(new NotFound({ path: "/etc/none" }))
})

const Boom = Tool.make("boom", { description: "Dies", handler: () => Effect.die(new Error("boom")) })

const Steps = Tool.make("steps", {
  description: "Three steps",
  handler: () =>
    Effect.gen(function*() {
      for (let i = 1; i <= 3; i++) yield* Tool.progress({ progress: i, total: 3, message: `step ${i}` })
      return "done"
    })
})

const Secret = Tool.make("secret", { description: "Unlocked", handler: () => Effect.succeed("the secret") })

type Kit = Toolkit.Toolkit<Tool.Tool<string>>

/** The served toolkit: `unlock` adds `secret` to it, which makes the server send `tools/list_changed`. */
const servedToolkit = Effect.gen(function*() {
  const ref = yield* SubscriptionRef.make<Kit>(Toolkit.make())
  const Unlock = Tool.make("unlock", {
    description: "Unlock the secret tool",
    handler: () => Effect.as(SubscriptionRef.update(ref, (kit) => Toolkit.merge(kit, Toolkit.make(Secret))), "unlocked")
  })
  const Hide = Tool.make("hide", {
    description: "Hide the secret tool again",
    handler: () => Effect.as(SubscriptionRef.update(ref, (kit) => Toolkit.omit(kit, "secret")), "hidden")
  })
  yield* SubscriptionRef.set(ref, Toolkit.make(Parts, Stats, Fail, Boom, Steps, Unlock, Hide))
  return ref
})

const info = { name: "ours", version: "0.1.0", instructions: "Our own tools." }

type Connect = (
  source: SubscriptionRef.SubscriptionRef<Kit>
) => Effect.Effect<McpClient.McpClient, unknown, Scope.Scope>

const transports: ReadonlyArray<readonly [string, Connect]> = [
  [
    "in memory",
    (source) =>
      Effect.gen(function*() {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        yield* McpServer.serve(source, info, serverSide)
        return yield* McpClient.connect(clientSide, { prefix: "ours" })
      })
  ],
  [
    "over Streamable HTTP",
    (source) =>
      Effect.gen(function*() {
        const { url } = yield* McpServer.http(source, { ...info, port: 0 })
        // a grace long enough for a notification on the other stream of a busy machine
        return yield* McpClient.connect(McpClient.http(url), { prefix: "ours", notificationGrace: "2 seconds" })
      })
  ]
]

const remote = (kit: Kit, name: string) => Option.getOrThrow(Toolkit.lookup(kit, name))

for (const [label, connect] of transports) {
  describe(`McpClient and McpServer, ${label}`, () => {
    it.scopedLive("a remote tool gives what the local tool gives", () =>
      Effect.gen(function*() {
        const client = yield* connect(yield* servedToolkit)
        expect(client.serverInfo).toMatchObject({ name: "ours", version: "0.1.0" })
        expect(client.instructions).toBe("Our own tools.")
        const kit = yield* client.toolkit
        expect(Toolkit.names(kit)).toEqual([
          "ours__parts",
          "ours__stats",
          "ours__fail",
          "ours__boom",
          "ours__steps",
          "ours__unlock",
          "ours__hide"
        ])

        const local = Either.getOrThrow(yield* Tool.execute(Parts, { id: "1", arguments: {} }))
        const parts = Either.getOrThrow(yield* Tool.execute(remote(kit, "ours__parts"), { id: "1", arguments: {} }))
        expect(parts.content).toEqual(local.content)
        expect(parts.content).toEqual(everyPart)
        // the record crossed as a JSON string: key order and large integers intact
        expect(parts.details).toBeInstanceOf(Recorder.Record)
        expect(JSON.stringify((parts.details as Recorder.Record).data)).toBe(
          JSON.stringify((local.details as Recorder.Record).data)
        )

        const stats = Either.getOrThrow(
          yield* Tool.execute(remote(kit, "ours__stats"), { id: "2", arguments: { text: "a\nb" } })
        )
        expect(stats.structured).toEqual({ lines: 2 })
        expect(ToolResult.toText(stats)).toBe("{\"lines\":2}")
        expect(remote(kit, "ours__stats").outputSchema).toEqual(Stats.outputSchema)

        // failures read the same to the model, with one `Error: `
        for (const [tool, name] of [[Fail, "ours__fail"], [Boom, "ours__boom"]] as const) {
          const mine = yield* Tool.execute(tool, { id: "3", arguments: {} })
          const theirs = yield* Tool.execute(remote(kit, name), { id: "3", arguments: {} })
          expect(modelText(theirs)).toBe(modelText(mine))
        }
        expect(modelText(yield* Tool.execute(remote(kit, "ours__fail"), { id: "4", arguments: {} }))).toBe(
          "Error: no such file: /etc/none"
        )

        // the server states every hint; the client keeps them as stated
        expect(remote(kit, "ours__parts").annotations).toMatchObject({ readOnly: true, title: "Parts" })
        expect(remote(kit, "ours__parts").title).toBe("Parts")
      }))

    it.scopedLive("progress reported by the served tool arrives as Progress events", () =>
      Effect.gen(function*() {
        const client = yield* connect(yield* servedToolkit)
        const events = yield* Stream.runCollect(
          Executor.stream(yield* client.toolkit, [{ id: "1", name: "ours__steps", arguments: {} }])
        )
        expect(Chunk.toArray(events).map((e) => e._tag === "Progress" ? e.progress : e._tag)).toEqual([
          "Started",
          { progress: 1, total: 3, message: "step 1" },
          { progress: 2, total: 3, message: "step 2" },
          { progress: 3, total: 3, message: "step 3" },
          "Finished"
        ])
      }))

    it.scopedLive("a call that changes the served tools is followed; once the server is seen to announce a change after its result, a call returns with the new tools listed", () =>
      Effect.gen(function*() {
        const client = yield* connect(yield* servedToolkit)
        const names = Effect.map(client.toolkit, Toolkit.names)
        expect(yield* names).not.toContain("ours__secret")
        /** Unlocks or hides `secret`; whether the call returned with the list as it made it. */
        const toggle = (unlock: boolean) =>
          Effect.gen(function*() {
            const name = unlock ? "ours__unlock" : "ours__hide"
            const [outcome] = yield* Executor.run(yield* client.toolkit, [{ id: name, name, arguments: {} }])
            expect(modelText(outcome)).toBe(unlock ? "unlocked" : "hidden")
            const listed = (yield* names).includes("ours__secret") === unlock
            // in memory the notification comes before the result; over HTTP on another stream, before or after it
            for (let i = 0; i < 200 && (yield* names).includes("ours__secret") !== unlock; i++) {
              yield* Effect.sleep("10 millis")
            }
            expect((yield* names).includes("ours__secret")).toBe(unlock)
            return listed
          })
        // until the server is seen to send a notification after its result (over HTTP it may never be: then the
        // notification always came first, and every call returned with the list it made)
        let unlock = true
        for (let i = 0; i < 6; i++) {
          const listed = yield* toggle(unlock)
          unlock = !unlock
          if (!listed) break
        }
        // `unlock` is the next change: `secret` is there when the next one hides it
        const [secret] = yield* Executor.run(yield* client.toolkit, [{ id: "s", name: "ours__secret", arguments: {} }])
        if (unlock) expect(modelText(secret)).toContain("unknown tool")
        else expect(modelText(secret)).toBe("the secret")
        // from now on, a call that changes the tools returns with them listed
        for (let i = 0; i < 4; i++) {
          expect(yield* toggle(unlock)).toBe(true)
          unlock = !unlock
        }
      }))
  })
}
