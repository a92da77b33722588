import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber, Layer, Ref, Schema, Stream, TestClock } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { Executor, Recorder, Tool, Toolkit, ToolResult } from "../src/index.js"
import { modelText } from "./helpers.js"

const Spawned = Schema.Struct({ pgid: Schema.Int, startedAt: Schema.Date })
const Finished = Schema.Struct({ exitCode: Schema.Int })

const at = new Date("2025-01-02T03:04:05.678Z")

/** A tool that writes a record the moment it has its handle, then carries on. */
const Spawn = Tool.make("spawn", {
  description: "Start a process",
  parameters: { pgid: Schema.Int },
  handler: ({ pgid }) =>
    Effect.as(Recorder.write(Recorder.makeRecord("spawn/process", Spawned, { pgid, startedAt: at })), `started ${pgid}`)
})

/** A tool whose result carries a recordable `details`. */
const Exit = Tool.make("exit", {
  description: "Finish a process",
  parameters: { code: Schema.Int },
  handler: ({ code }) =>
    Effect.succeed(
      ToolResult.withDetails(
        ToolResult.text(`exited ${code}`),
        Recorder.makeRecord("exit/status", Finished, { exitCode: code })
      )
    )
})

/** A recorder whose every write fails, for the paths where recording is not possible. */
const failing = Layer.succeed(Recorder.Recorder, {
  write: (entry) => Effect.fail(new Recorder.RecordError({ namespace: entry.record.namespace, reason: "disk full" }))
})

/** A fresh temp folder for the test's scope. */
const tempDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "agent-tools-recorder-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

const readLines = (file: string) =>
  Effect.promise(() => fs.readFile(file, "utf8")).pipe(
    Effect.map((text) => {
      expect(text.endsWith("\n")).toBe(true)
      return text.slice(0, -1).split("\n")
    })
  )

describe("Recorder", () => {
  describe("write inside a handler", () => {
    it.effect("records an entry for the current call, phase \"during\"", () =>
      Effect.gen(function*() {
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        const layer = Recorder.layerMemory(entries)
        const outcomes = yield* Executor.run(Toolkit.make(Spawn), [
          { id: "call_1", name: "spawn", arguments: { pgid: 4242 } }
        ]).pipe(Effect.provide(layer))
        expect(outcomes.map(modelText)).toEqual(["started 4242"])
        const recorded = yield* Ref.get(entries)
        expect(recorded).toHaveLength(1)
        const [entry] = recorded
        expect(entry).toMatchObject({ callId: "call_1", tool: "spawn", phase: "during" })
        expect(entry.record.namespace).toBe("spawn/process")
        expect(entry.record.data).toEqual({ pgid: 4242, startedAt: "2025-01-02T03:04:05.678Z" })
        expect(Recorder.isRecordable(entry.record)).toBe(true)
      }))

    it.effect("works the same through Tool.execute", () =>
      Effect.gen(function*() {
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        const layer = Recorder.layerMemory(entries)
        const outcome = yield* Tool.execute(Spawn, { id: "call_x", arguments: { pgid: 7 } }).pipe(Effect.provide(layer))
        expect(Either.map(outcome, ToolResult.toText)).toEqual(Either.right("started 7"))
        expect((yield* Ref.get(entries)).map((e) => [e.callId, e.tool, e.phase])).toEqual([[
          "call_x",
          "spawn",
          "during"
        ]])
      }))

    it.effect("records each call of a batch under its own call id", () =>
      Effect.gen(function*() {
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        const layer = Recorder.layerMemory(entries)
        yield* Executor.run(Toolkit.make(Spawn), [
          { id: "a", name: "spawn", arguments: { pgid: 1 } },
          { id: "b", name: "spawn", arguments: { pgid: 2 } },
          { id: "c", name: "spawn", arguments: { pgid: 3 } }
        ]).pipe(Effect.provide(layer))
        const byCall = (yield* Ref.get(entries)).map((e) => [e.callId, (e.record.data as { pgid: number }).pgid])
        expect(byCall.sort()).toEqual([["a", 1], ["b", 2], ["c", 3]])
      }))

    it.effect("reaches the recorder from a fiber the handler forked", () =>
      Effect.gen(function*() {
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        const layer = Recorder.layerMemory(entries)
        const Forking = Tool.make("forking", {
          description: "Record from a child fiber",
          handler: () =>
            Effect.fork(Recorder.write(Recorder.makeRecord("forking/child", Schema.String, "child"))).pipe(
              Effect.flatMap(Fiber.join)
            )
        })
        yield* Executor.run(Toolkit.make(Forking), [{ id: "f", name: "forking", arguments: {} }]).pipe(
          Effect.provide(layer)
        )
        expect((yield* Ref.get(entries)).map((e) => [e.callId, e.tool, e.record.data])).toEqual([
          ["f", "forking", "child"]
        ])
      }))

    it.effect("is a no-op that succeeds when no recorder is installed", () =>
      Effect.gen(function*() {
        const outcomes = yield* Executor.run(Toolkit.make(Spawn), [{ id: "a", name: "spawn", arguments: { pgid: 1 } }])
        expect(outcomes.map(modelText)).toEqual(["started 1"])
      }))

    it.effect("the Recorder is a Context.Reference: with nothing provided it is the default that records nothing", () =>
      Effect.gen(function*() {
        const recorder: Effect.Effect.Success<typeof Recorder.Recorder> = yield* Recorder.Recorder
        const entry: Recorder.Entry = {
          callId: "c",
          tool: "t",
          phase: "during",
          record: new Recorder.Record({ namespace: "n", data: 1 })
        }
        yield* recorder.write(entry)
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        const provided = yield* Effect.provide(Recorder.Recorder, Recorder.layerMemory(entries))
        yield* provided.write(entry)
        expect(yield* Ref.get(entries)).toEqual([entry])
      }))

    it.effect("is a no-op outside a call, even with a recorder installed", () =>
      Effect.gen(function*() {
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        const layer = Recorder.layerMemory(entries)
        yield* Recorder.write(Recorder.makeRecord("loose/record", Schema.String, "x")).pipe(Effect.provide(layer))
        yield* Recorder.write(Recorder.makeRecord("loose/record", Schema.String, "x"))
        expect(yield* Ref.get(entries)).toEqual([])
      }))

    it.effect("returns only after the recorder's write completed", () =>
      Effect.gen(function*() {
        const durable = yield* Ref.make<ReadonlyArray<string>>([])
        const progress = yield* Ref.make<ReadonlyArray<string>>([])
        // a slow journal: the entry becomes durable a second after the write starts
        const slow = Layer.succeed(Recorder.Recorder, {
          write: (entry) =>
            Effect.zipRight(Effect.sleep("1 second"), Ref.update(durable, (all) => [...all, entry.record.namespace]))
        })
        const Careful = Tool.make("careful", {
          description: "Record the handle before the side effect",
          handler: () =>
            Effect.gen(function*() {
              yield* Ref.update(progress, (all) => [...all, "spawned"])
              yield* Recorder.write(Recorder.makeRecord("careful/pgid", Schema.Int, 99))
              yield* Ref.update(progress, (all) => [...all, "after write"])
              return "ok"
            })
        })
        const fiber = yield* Effect.fork(
          Executor.run(Toolkit.make(Careful), [{ id: "c", name: "careful", arguments: {} }]).pipe(Effect.provide(slow))
        )
        yield* TestClock.adjust("999 millis")
        expect(yield* Ref.get(progress)).toEqual(["spawned"])
        expect(yield* Ref.get(durable)).toEqual([])
        yield* TestClock.adjust("1 millis")
        const outcomes = yield* Fiber.join(fiber)
        expect(outcomes.map(modelText)).toEqual(["ok"])
        expect(yield* Ref.get(durable)).toEqual(["careful/pgid"])
        expect(yield* Ref.get(progress)).toEqual(["spawned", "after write"])
      }))

    it.effect("fails with RecordError when the recorder cannot make it durable, so the tool can stop short", () =>
      Effect.gen(function*() {
        const sideEffects: Array<string> = []
        const Careful = Tool.make("careful", {
          description: "Never spawn without a record",
          handler: () =>
            Effect.zipRight(
              Recorder.write(Recorder.makeRecord("careful/pgid", Schema.Int, 1)),
              Effect.sync(() => sideEffects.push("spawned"))
            )
        })
        const [outcome] = yield* Executor.run(Toolkit.make(Careful), [{ id: "c", name: "careful", arguments: {} }])
          .pipe(
            Effect.provide(failing)
          )
        expect(modelText(outcome)).toBe("Error: the record \"careful/pgid\" could not be written: disk full")
        expect(Either.isLeft(outcome) && outcome.left._tag).toBe("ToolFailure")
        expect(sideEffects).toEqual([])
      }))
  })

  describe("a result's details", () => {
    it.effect("that is a Record is recorded once more with phase \"end\" when the call ends", () =>
      Effect.gen(function*() {
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        const layer = Recorder.layerMemory(entries)
        const Both = Tool.make("both", {
          description: "Record during, and return recordable details",
          handler: () =>
            Effect.zipRight(
              Recorder.write(Recorder.makeRecord("both/started", Schema.String, "pid 1")),
              Effect.succeed(
                ToolResult.withDetails(
                  ToolResult.text("done"),
                  Recorder.makeRecord("both/ended", Finished, { exitCode: 0 })
                )
              )
            )
        })
        const outcomes = yield* Executor.run(Toolkit.make(Both, Exit), [
          { id: "b", name: "both", arguments: {} },
          { id: "e", name: "exit", arguments: { code: 3 } }
        ], { maxParallel: 1 }).pipe(Effect.provide(layer))
        expect(outcomes.map(modelText)).toEqual(["done", "exited 3"])
        const recorded = (yield* Ref.get(entries)).map((e) => [e.callId, e.tool, e.phase, e.record.namespace])
        expect(recorded).toEqual([
          ["b", "both", "during", "both/started"],
          ["b", "both", "end", "both/ended"],
          ["e", "exit", "end", "exit/status"]
        ])
        // the details stay on the result for the application, as they were
        const [, exited] = outcomes
        expect(Either.isRight(exited) && exited.right.details).toEqual(
          Recorder.makeRecord("exit/status", Finished, { exitCode: 3 })
        )
      }))

    it.effect("is recorded before the call's Finished event", () =>
      Effect.gen(function*() {
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        const layer = Recorder.layerMemory(entries)
        const seenAtFinish: Array<number> = []
        yield* Executor.stream(Toolkit.make(Exit), [{ id: "e", name: "exit", arguments: { code: 0 } }]).pipe(
          Stream.runForEach((event) =>
            event._tag === "Finished"
              ? Effect.flatMap(Ref.get(entries), (all) => Effect.sync(() => seenAtFinish.push(all.length)))
              : Effect.void
          ),
          Effect.provide(layer)
        )
        expect(seenAtFinish).toEqual([1])
      }))

    it.effect("that is not recordable is not recorded", () =>
      Effect.gen(function*() {
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        const layer = Recorder.layerMemory(entries)
        const Plain = Tool.make("plain", {
          description: "Details for the application only",
          handler: () => Effect.succeed(ToolResult.withDetails(ToolResult.text("ok"), { namespace: "x", data: 1 }))
        })
        yield* Executor.run(Toolkit.make(Plain), [{ id: "p", name: "plain", arguments: {} }]).pipe(
          Effect.provide(layer)
        )
        expect(yield* Ref.get(entries)).toEqual([])
      }))

    it.effect("a recorder failing at the end leaves the call a success", () =>
      Effect.gen(function*() {
        const outcomes = yield* Executor.run(Toolkit.make(Exit), [
          { id: "e", name: "exit", arguments: { code: 0 } }
        ]).pipe(Effect.provide(failing))
        expect(outcomes.map(modelText)).toEqual(["exited 0"])
        expect(Either.isRight(outcomes[0])).toBe(true)
      }))

    it.effect("is not recorded without a recorder, and the call is unchanged", () =>
      Effect.gen(function*() {
        const outcomes = yield* Executor.run(Toolkit.make(Exit), [{ id: "e", name: "exit", arguments: { code: 1 } }])
        expect(outcomes.map(modelText)).toEqual(["exited 1"])
      }))
  })

  describe("make and decode", () => {
    it("round-trip a value through its schema, Dates included", () => {
      const record = Recorder.makeRecord("bash/process", Spawned, { pgid: 4242, startedAt: at })
      expect(record.namespace).toBe("bash/process")
      // the data is the encoded side, plain JSON
      expect(record.data).toEqual({ pgid: 4242, startedAt: "2025-01-02T03:04:05.678Z" })
      expect(JSON.parse(JSON.stringify(record.data))).toEqual(record.data)
      const decoded = Recorder.decode(record, Spawned)
      expect(Either.isRight(decoded)).toBe(true)
      if (Either.isLeft(decoded)) return
      expect(decoded.right.startedAt).toBeInstanceOf(Date)
      expect(decoded.right).toEqual({ pgid: 4242, startedAt: at })
    })

    it("decode reads a record that crossed JSON", () => {
      const record = Recorder.makeRecord("bash/process", Spawned, { pgid: 1, startedAt: at })
      const line = JSON.parse(
        Recorder.toJsonLine({ callId: "c", tool: "bash", phase: "during", record })
      ) as { namespace: string; data: unknown }
      const decoded = Recorder.decode(new Recorder.Record({ namespace: line.namespace, data: line.data }), Spawned)
      expect(decoded).toEqual(Either.right({ pgid: 1, startedAt: at }))
    })

    it("decode with the wrong schema is a Left", () => {
      const record = Recorder.makeRecord("exit/status", Finished, { exitCode: 0 })
      expect(Either.isLeft(Recorder.decode(record, Spawned))).toBe(true)
    })

    it("make throws for a value its schema cannot encode (a programmer error)", () => {
      expect(() => Recorder.makeRecord("bad", Schema.Int, 1.5)).toThrow()
    })

    it("isRecordable tells records from look-alikes", () => {
      expect(Recorder.isRecordable(Recorder.makeRecord("x", Schema.Number, 1))).toBe(true)
      expect(Recorder.isRecordable(new Recorder.Record({ namespace: "x", data: 1 }))).toBe(true)
      expect(Recorder.isRecordable({ namespace: "x", data: 1 })).toBe(false)
      expect(Recorder.isRecordable(undefined)).toBe(false)
    })
  })

  describe("toJsonLine", () => {
    it("is one line of { callId, tool, phase, namespace, data }", () => {
      const line = Recorder.toJsonLine({
        callId: "call_1",
        tool: "bash",
        phase: "during",
        record: new Recorder.Record({ namespace: "bash/process", data: { pgid: 1, note: "a\nb" } })
      })
      expect(line).toBe(
        "{\"callId\":\"call_1\",\"tool\":\"bash\",\"phase\":\"during\",\"namespace\":\"bash/process\","
          + "\"data\":{\"pgid\":1,\"note\":\"a\\nb\"}}"
      )
      expect(line).not.toContain("\n")
    })
  })

  describe("layerJsonLines", () => {
    it.scoped("writes one JSON line per entry, in toJsonLine's format", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = path.join(dir, "records.jsonl")
        const journal = Recorder.layerJsonLines(file).pipe(Layer.provide(NodeFileSystem.layer))
        yield* Executor.run(Toolkit.make(Spawn, Exit), [
          { id: "s", name: "spawn", arguments: { pgid: 12 } },
          { id: "e", name: "exit", arguments: { code: 2 } }
        ], { sequential: true }).pipe(Effect.provide(journal))
        const lines = yield* readLines(file)
        expect(lines).toEqual([
          Recorder.toJsonLine({
            callId: "s",
            tool: "spawn",
            phase: "during",
            record: Recorder.makeRecord("spawn/process", Spawned, { pgid: 12, startedAt: at })
          }),
          Recorder.toJsonLine({
            callId: "e",
            tool: "exit",
            phase: "end",
            record: Recorder.makeRecord("exit/status", Finished, { exitCode: 2 })
          })
        ])
        expect(JSON.parse(lines[0])).toEqual({
          callId: "s",
          tool: "spawn",
          phase: "during",
          namespace: "spawn/process",
          data: { pgid: 12, startedAt: "2025-01-02T03:04:05.678Z" }
        })
      }))

    it.scoped("appends to an existing journal instead of replacing it", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = path.join(dir, "records.jsonl")
        const journal = Recorder.layerJsonLines(file).pipe(Layer.provide(NodeFileSystem.layer))
        for (const pgid of [1, 2]) {
          yield* Executor.run(Toolkit.make(Spawn), [{ id: `run${pgid}`, name: "spawn", arguments: { pgid } }]).pipe(
            Effect.provide(journal)
          )
        }
        const lines = yield* readLines(file)
        expect(lines.map((l) => JSON.parse(l).callId)).toEqual(["run1", "run2"])
      }))

    it.scoped("keeps 20 parallel calls' records whole, one line each", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = path.join(dir, "records.jsonl")
        const journal = Recorder.layerJsonLines(file).pipe(Layer.provide(NodeFileSystem.layer))
        // big enough that one entry is more than one small write, so interleaving would show
        const payload = "x".repeat(64 * 1024)
        const Big = Tool.make("big", {
          description: "Write a large record",
          parameters: { n: Schema.Int },
          handler: ({ n }) => Recorder.write(Recorder.makeRecord("big/blob", Schema.String, `${n}:${payload}`))
        })
        const calls = Array.from({ length: 20 }, (_, n) => ({ id: `call_${n}`, name: "big", arguments: { n } }))
        const outcomes = yield* Executor.run(Toolkit.make(Big), calls, { maxParallel: 20 }).pipe(
          Effect.provide(journal)
        )
        expect(outcomes.every(Either.isRight)).toBe(true)
        const lines = yield* readLines(file)
        expect(lines).toHaveLength(20)
        const parsed = lines.map((l) => JSON.parse(l) as { callId: string; data: string })
        expect(parsed.map((e) => e.callId).sort()).toEqual(calls.map((c) => c.id).sort())
        for (const entry of parsed) {
          expect(entry.data).toBe(`${entry.callId.slice("call_".length)}:${payload}`)
        }
      }))

    it.scoped("fails to build with RecordError when the file cannot be opened", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const journal = Recorder.layerJsonLines(path.join(dir, "missing", "records.jsonl")).pipe(
          Layer.provide(NodeFileSystem.layer)
        )
        const result = yield* Effect.either(Layer.build(journal))
        expect(Either.isLeft(result) && result.left._tag).toBe("RecordError")
      }))

    it.scoped("the line is in the file by the time write returns", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = path.join(dir, "records.jsonl")
        const journal = Recorder.layerJsonLines(file).pipe(Layer.provide(NodeFileSystem.layer))
        const Check = Tool.make("check", {
          description: "Read the journal right after writing",
          handler: () =>
            Effect.zipRight(
              Recorder.write(Recorder.makeRecord("check/now", Schema.String, "now")),
              Effect.map(readLines(file), (lines) => lines.map((l) => JSON.parse(l).namespace).join(","))
            )
        })
        const [outcome] = yield* Executor.run(Toolkit.make(Check), [{ id: "k", name: "check", arguments: {} }]).pipe(
          Effect.provide(journal)
        )
        expect(modelText(outcome)).toBe("check/now")
      }))
  })
})
