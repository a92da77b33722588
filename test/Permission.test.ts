import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Layer, Option, Schema, Stream } from "effect"
import { Executor, Permission, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"
import { modelText } from "./helpers.js"

/** What the tests watch: the requests the requester saw, whether a handler or a preview ran, in which order. */
interface Probe {
  readonly log: Array<string>
  readonly requests: Array<Permission.PermissionRequest>
}

const probe = (): Probe => ({ log: [], requests: [] })

/** A requester answering `decide`, keeping every request and logging `"permission"` when asked. */
const requester = (p: Probe, decide: (request: Permission.PermissionRequest) => Permission.Decision) =>
  Permission.layer((request) =>
    Effect.sync(() => {
      p.log.push("permission")
      p.requests.push(request)
      return decide(request)
    })
  )

/**
 * A write tool declaring every part of a permission spec. `lines` is a `NumberFromString` so the request's
 * `parameters` can be told apart from the raw arguments: they are the decoded value.
 */
const writeTool = (p: Probe) =>
  Tool.make("write_file", {
    description: "Write lines to a file",
    parameters: { path: Schema.String, text: Schema.String, lines: Schema.NumberFromString },
    annotations: { destructive: true, idempotent: true },
    permission: {
      action: "write",
      describe: ({ lines, path }) => `write ${lines} lines to ${path}`,
      path: ({ path }) => path,
      preview: ({ path, text }) =>
        Effect.sync(() => {
          p.log.push("preview")
          return `--- ${path}\n+++ ${path}\n@@ -0,0 +1 @@\n+${text}`
        })
    },
    handler: ({ path }) =>
      Effect.sync(() => {
        p.log.push("handler")
        return `wrote ${path}`
      })
  })

const writeCall = {
  id: "call_w",
  name: "write_file",
  arguments: JSON.stringify({ path: "src/a.ts", text: "export {}", lines: "1" })
}

const diff = "--- src/a.ts\n+++ src/a.ts\n@@ -0,0 +1 @@\n+export {}"

describe("Permission", () => {
  describe("a tool that declares permission", () => {
    it.effect("runs unchanged when no requester is installed, without computing its preview", () =>
      Effect.gen(function*() {
        const p = probe()
        const [outcome] = yield* Executor.run(Toolkit.make(writeTool(p)), [writeCall])
        expect(modelText(outcome)).toBe("wrote src/a.ts")
        // the preview is only for a requester to show; with nobody to ask it is not worth its cost
        expect(p.log).toEqual(["handler"])
      }))

    it.effect("asks with the call id, tool, action, description, path, decoded parameters, annotations, preview", () =>
      Effect.gen(function*() {
        const p = probe()
        const [outcome] = yield* Executor.run(Toolkit.make(writeTool(p)), [writeCall]).pipe(
          Effect.provide(requester(p, () => Permission.allow))
        )
        expect(modelText(outcome)).toBe("wrote src/a.ts")
        expect(p.requests).toEqual([{
          callId: "call_w",
          tool: "write_file",
          action: "write",
          description: "write 1 lines to src/a.ts",
          path: "src/a.ts",
          parameters: { path: "src/a.ts", text: "export {}", lines: 1 },
          annotations: { destructive: true, idempotent: true },
          preview: diff
        }])
        expect(p.log).toEqual(["preview", "permission", "handler"])
      }))

    it.effect("describes the call as `<tool> (<action>)` when it declares no describe, path or preview", () =>
      Effect.gen(function*() {
        const p = probe()
        const Deploy = Tool.make("deploy", {
          description: "Deploy the site",
          permission: { action: "network" },
          handler: () => Effect.succeed("deployed")
        })
        const [outcome] = yield* Executor.run(Toolkit.make(Deploy), [{ id: "d1", name: "deploy", arguments: "" }]).pipe(
          Effect.provide(requester(p, () => Permission.allow))
        )
        expect(modelText(outcome)).toBe("deployed")
        expect(p.requests).toEqual([{
          callId: "d1",
          tool: "deploy",
          action: "network",
          description: "deploy (network)",
          path: undefined,
          parameters: {},
          annotations: {},
          preview: undefined
        }])
      }))

    it.effect("is asked once per call, each request carrying its own call id", () =>
      Effect.gen(function*() {
        const p = probe()
        const calls = ["1", "2", "3"].map((n) => ({
          id: `call_${n}`,
          name: "write_file",
          arguments: { path: `f${n}.ts`, text: n, lines: n }
        }))
        const outcomes = yield* Executor.run(Toolkit.make(writeTool(p)), calls).pipe(
          Effect.provide(requester(p, (request) => request.path === "f2.ts" ? Permission.deny() : Permission.allow))
        )
        expect(outcomes.map(modelText)).toEqual([
          "wrote f1.ts",
          "Error: permission denied: write 2 lines to f2.ts",
          "wrote f3.ts"
        ])
        expect(p.requests.map((r) => r.callId).sort()).toEqual(["call_1", "call_2", "call_3"])
      }))
  })

  describe("a denial", () => {
    it.effect("never starts the handler: no Started event, and the call finishes with PermissionDenied", () =>
      Effect.gen(function*() {
        const p = probe()
        const events = yield* Stream.runCollect(Executor.stream(Toolkit.make(writeTool(p)), [writeCall])).pipe(
          Effect.provide(requester(p, () => Permission.deny("this session is read-only")))
        )
        const [event] = events
        expect(events.length).toBe(1)
        expect(event._tag).toBe("Finished")
        if (event._tag !== "Finished") return
        expect(event.index).toBe(0)
        expect(event.durationMillis).toBe(0)
        expect(Either.isLeft(event.outcome)).toBe(true)
        if (Either.isRight(event.outcome)) return
        const error = event.outcome.left
        expect(error._tag).toBe("PermissionDenied")
        expect(error).toBeInstanceOf(ToolError.PermissionDenied)
        expect(error.message).toBe("permission denied: write 1 lines to src/a.ts: this session is read-only")
        expect(ToolError.toModelText(error)).toBe(
          "Error: permission denied: write 1 lines to src/a.ts: this session is read-only"
        )
        expect(error).toMatchObject({ tool: "write_file", description: "write 1 lines to src/a.ts" })
        expect(p.log).toEqual(["preview", "permission"])
      }))

    it.effect("without a reason reads `permission denied: <description>`", () =>
      Effect.gen(function*() {
        const p = probe()
        const [outcome] = yield* Executor.run(Toolkit.make(writeTool(p)), [writeCall]).pipe(
          Effect.provide(requester(p, () => Permission.deny()))
        )
        expect(Either.isLeft(outcome) && outcome.left.message).toBe("permission denied: write 1 lines to src/a.ts")
        expect(Either.isLeft(outcome) && outcome.left._tag === "PermissionDenied" && outcome.left.reason).toBe(
          undefined
        )
        expect(p.log).not.toContain("handler")
      }))

    it.effect("never runs onStart either", () =>
      Effect.gen(function*() {
        const p = probe()
        const [outcome] = yield* Executor.run(Toolkit.make(writeTool(p)), [writeCall], {
          onStart: () => Effect.sync(() => p.log.push("onStart"))
        }).pipe(Effect.provide(requester(p, () => Permission.deny("no"))))
        expect(modelText(outcome)).toBe("Error: permission denied: write 1 lines to src/a.ts: no")
        expect(p.log).toEqual(["preview", "permission"])
      }))

    it.effect("is the outcome of Tool.execute too, which asks the same requester", () =>
      Effect.gen(function*() {
        const p = probe()
        const tool = writeTool(p)
        const denied = yield* Tool.execute(tool, { id: "x1", arguments: writeCall.arguments }).pipe(
          Effect.provide(requester(p, () => Permission.deny("not now")))
        )
        expect(Either.isLeft(denied) && ToolError.toModelText(denied.left)).toBe(
          "Error: permission denied: write 1 lines to src/a.ts: not now"
        )
        expect(p.log).toEqual(["preview", "permission"])
        expect(p.requests[0]).toMatchObject({ callId: "x1", tool: "write_file", preview: diff })

        const allowed = yield* Tool.execute(tool, { id: "x2", arguments: writeCall.arguments }).pipe(
          Effect.provide(requester(p, () => Permission.allow))
        )
        expect(Either.map(allowed, ToolResult.toText)).toEqual(Either.right("wrote src/a.ts"))

        const unasked = yield* Tool.execute(tool, { id: "x3", arguments: writeCall.arguments })
        expect(Either.map(unasked, ToolResult.toText)).toEqual(Either.right("wrote src/a.ts"))
      }))
  })

  describe("a failing preview", () => {
    class NotText extends Schema.TaggedError<NotText>()("NotText", { path: Schema.String }) {
      override get message() {
        return `cannot diff ${this.path}: it is not a text file`
      }
    }

    const badPreviewTool = (p: Probe, preview: (path: string) => Effect.Effect<string, NotText>) =>
      Tool.make("write_file", {
        description: "Write a file",
        parameters: { path: Schema.String },
        permission: { action: "write", preview: ({ path }) => preview(path) },
        handler: () => Effect.sync(() => p.log.push("handler"))
      })

    it.effect("is that call's failure, and the requester is not asked", () =>
      Effect.gen(function*() {
        const p = probe()
        const kit = Toolkit.make(badPreviewTool(p, (path) => Effect.fail(new NotText({ path }))))
        const events = yield* Stream.runCollect(
          Executor.stream(kit, [
            { id: "c1", name: "write_file", arguments: { path: "logo.png" } },
            { id: "c2", name: "write_file", arguments: { path: "other.png" } }
          ])
        ).pipe(Effect.provide(requester(p, () => Permission.allow)))
        expect([...events].map((e) => e._tag)).toEqual(["Finished", "Finished"])
        const outcomes = [...events].flatMap((e) => e._tag === "Finished" ? [[e.index, modelText(e.outcome)]] : [])
        expect(outcomes.sort()).toEqual([
          [0, "Error: cannot diff logo.png: it is not a text file"],
          [1, "Error: cannot diff other.png: it is not a text file"]
        ])
        expect(p.requests).toEqual([])
        expect(p.log).toEqual([])
      }))

    it.effect("keeps the preview's typed error on the ToolFailure", () =>
      Effect.gen(function*() {
        const p = probe()
        const tool = badPreviewTool(p, (path) => Effect.fail(new NotText({ path })))
        const outcome = yield* Tool.execute(tool, { id: "c1", arguments: { path: "logo.png" } }).pipe(
          Effect.provide(requester(p, () => Permission.allow))
        )
        expect(Either.isLeft(outcome)).toBe(true)
        if (Either.isRight(outcome)) return
        expect(outcome.left._tag).toBe("ToolFailure")
        expect(outcome.left._tag === "ToolFailure" && outcome.left.error).toEqual(new NotText({ path: "logo.png" }))
        expect(p.requests).toEqual([])
      }))

    it.effect("that dies is that call's ToolDefect", () =>
      Effect.gen(function*() {
        const p = probe()
        const tool = badPreviewTool(p, () => Effect.die(new Error("diff engine crashed")))
        const [outcome] = yield* Executor.run(Toolkit.make(tool), [
          { id: "c1", name: "write_file", arguments: { path: "a.txt" } }
        ]).pipe(Effect.provide(requester(p, () => Permission.allow)))
        expect(modelText(outcome)).toBe("Error: tool \"write_file\" panicked: diff engine crashed")
        expect(p.requests).toEqual([])
        expect(p.log).toEqual([])
      }))
  })

  describe("order", () => {
    it.effect("permission comes before onStart, and onStart before the handler", () =>
      Effect.gen(function*() {
        const p = probe()
        const [outcome] = yield* Executor.run(Toolkit.make(writeTool(p)), [writeCall], {
          onStart: () => Effect.sync(() => p.log.push("onStart"))
        }).pipe(Effect.provide(requester(p, () => Permission.allow)))
        expect(modelText(outcome)).toBe("wrote src/a.ts")
        expect(p.log).toEqual(["preview", "permission", "onStart", "handler"])
      }))

    it.scoped("Started is not emitted while the requester is still deciding", () =>
      Effect.gen(function*() {
        const p = probe()
        const asked = yield* Deferred.make<void>()
        const decision = yield* Deferred.make<Permission.Decision>()
        const slowRequester = Permission.layer(() =>
          Effect.zipRight(Deferred.succeed(asked, undefined), Deferred.await(decision))
        )
        const seen: Array<string> = []
        const batch = yield* Executor.start(Toolkit.make(writeTool(p)), [writeCall], {
          onStart: () => Effect.sync(() => p.log.push("onStart"))
        }).pipe(Effect.provide(slowRequester))
        const consumer = yield* Effect.fork(
          Stream.runForEach(batch.events, (e) => Effect.sync(() => seen.push(e._tag)))
        )
        yield* Deferred.await(asked)
        // give a wrongly ordered executor every chance to have emitted `Started` by now
        yield* Effect.repeatN(Effect.yieldNow(), 20)
        expect(seen).toEqual([])
        expect(p.log).toEqual(["preview"])
        yield* Deferred.succeed(decision, Permission.allow)
        yield* Fiber.join(consumer)
        expect(seen).toEqual(["Started", "Finished"])
        expect(p.log).toEqual(["preview", "onStart", "handler"])
      }))
  })

  describe("inside a handler", () => {
    /** A tool asking on its own, mid-call, with the answer as its output. */
    const Fetch = Tool.make("fetch_url", {
      description: "Fetch a URL",
      parameters: { url: Schema.String },
      annotations: { readOnly: true, openWorld: true },
      handler: ({ url }) =>
        Effect.map(
          Permission.request({ action: "network", description: `fetch ${url}`, path: url, parameters: { url } }),
          (decision) => decision._tag === "Allow" ? "fetched" : `not fetched: ${decision.reason}`
        )
    })

    const Delete = Tool.make("delete_tree", {
      description: "Delete a directory tree",
      parameters: { path: Schema.String },
      handler: ({ path }) =>
        Effect.as(Permission.require({ action: "delete", description: `delete ${path} recursively`, path }), "deleted")
    })

    it.effect("request is allowed when no requester is installed", () =>
      Effect.gen(function*() {
        const outcomes = yield* Executor.run(Toolkit.make(Fetch, Delete), [
          { id: "f", name: "fetch_url", arguments: { url: "https://example.com" } },
          { id: "d", name: "delete_tree", arguments: { path: "/tmp/x" } }
        ])
        expect(outcomes.map(modelText)).toEqual(["fetched", "deleted"])
        expect(yield* Permission.request({ action: "network", description: "outside any call" })).toEqual(
          Permission.allow
        )
        yield* Permission.require({ action: "network", description: "outside any call" })
      }))

    it.effect("request fills in the current call's id, tool name and annotations", () =>
      Effect.gen(function*() {
        const p = probe()
        const [outcome] = yield* Executor.run(Toolkit.make(Fetch), [
          { id: "call_f", name: "fetch_url", arguments: { url: "https://example.com" } }
        ]).pipe(Effect.provide(requester(p, () => Permission.deny("offline"))))
        expect(modelText(outcome)).toBe("not fetched: offline")
        expect(p.requests).toEqual([{
          callId: "call_f",
          tool: "fetch_url",
          action: "network",
          description: "fetch https://example.com",
          path: "https://example.com",
          parameters: { url: "https://example.com" },
          annotations: { readOnly: true, openWorld: true },
          preview: undefined
        }])
      }))

    it.effect("require refused ends the call with PermissionDenied naming the tool", () =>
      Effect.gen(function*() {
        const p = probe()
        const [outcome] = yield* Executor.run(Toolkit.make(Delete), [
          { id: "call_d", name: "delete_tree", arguments: { path: "/srv" } }
        ]).pipe(Effect.provide(requester(p, () => Permission.deny("not on a server"))))
        expect(Either.isLeft(outcome)).toBe(true)
        if (Either.isRight(outcome)) return
        expect(outcome.left).toBeInstanceOf(ToolError.PermissionDenied)
        expect(outcome.left).toMatchObject({
          _tag: "PermissionDenied",
          tool: "delete_tree",
          description: "delete /srv recursively",
          reason: "not on a server"
        })
        expect(ToolError.toModelText(outcome.left)).toBe(
          "Error: permission denied: delete /srv recursively: not on a server"
        )
        expect(p.requests[0]).toMatchObject({ callId: "call_d", tool: "delete_tree", action: "delete", path: "/srv" })
      }))

    it.effect("require allowed lets the handler go on", () =>
      Effect.gen(function*() {
        const p = probe()
        const outcome = yield* Tool.execute(Delete, { id: "call_d", arguments: { path: "/tmp/x" } }).pipe(
          Effect.provide(requester(p, () => Permission.allow))
        )
        expect(Either.map(outcome, ToolResult.toText)).toEqual(Either.right("deleted"))
        expect(p.requests.map((r) => r.callId)).toEqual(["call_d"])
      }))

    it.effect("outside a call, request reaches the requester with no call id or tool", () =>
      Effect.gen(function*() {
        const p = probe()
        const refused = yield* Effect.either(Permission.require({ action: "exec", description: "run make" })).pipe(
          Effect.provide(requester(p, () => Permission.deny()))
        )
        expect(Either.isLeft(refused) && refused.left.message).toBe("permission denied: run make")
        expect(p.requests).toEqual([{
          callId: "",
          tool: "",
          action: "exec",
          description: "run make",
          path: undefined,
          parameters: undefined,
          annotations: {},
          preview: undefined
        }])
      }))
  })

  describe("a policy keyed on annotations", () => {
    // Annotations are hints written by a tool's author or by a remote server we may not trust. A policy may use
    // them to be stricter (ask, or refuse, anything that says `destructive: true`), never to allow on their own:
    // a server that labels its delete `readOnly: true` must not get the delete past the policy. So the rule below
    // denies on `destructive`, and a `readOnly` hint changes nothing: the decision still rests on the action.
    const policy = Permission.layer((request) =>
      Effect.succeed(
        request.annotations.destructive === true
          ? Permission.deny(`${request.tool} is destructive; ask a person`)
          : request.action === "read"
          ? Permission.allow
          : Permission.deny(`${request.action} is not allowed in this session`)
      )
    )

    const tool = (name: string, action: string, annotations: Tool.Annotations) =>
      Tool.make(name, {
        description: `A ${action} tool`,
        annotations,
        permission: { action, describe: () => `${name} does ${action}` },
        handler: () => Effect.succeed(`${name} ran`)
      })

    const kit = Toolkit.make(
      tool("cat", "read", { readOnly: true }),
      tool("rm", "write", { destructive: true }),
      tool("shred", "read", { destructive: true }),
      tool("sneaky_rm", "write", { readOnly: true, destructive: false }),
      tool("ls", "read", {})
    )

    it.effect("denies destructive tools, and a readOnly hint does not get a write through", () =>
      Effect.gen(function*() {
        const outcomes = yield* Executor.run(
          kit,
          Toolkit.names(kit).map((name) => ({ id: name, name, arguments: {} }))
        ).pipe(Effect.provide(policy))
        expect(outcomes.map(modelText)).toEqual([
          "cat ran",
          "Error: permission denied: rm does write: rm is destructive; ask a person",
          "Error: permission denied: shred does read: shred is destructive; ask a person",
          "Error: permission denied: sneaky_rm does write: write is not allowed in this session",
          "ls ran"
        ])
      }))

    it.effect("the same policy applies to Tool.execute", () =>
      Effect.gen(function*() {
        const rm = Option.getOrThrow(Toolkit.lookup(kit, "rm"))
        const outcome = yield* Tool.execute(rm, { id: "rm", arguments: {} }).pipe(Effect.provide(policy))
        expect(Either.isLeft(outcome) && outcome.left._tag).toBe("PermissionDenied")
      }))
  })

  describe("layers", () => {
    it.effect("Permission.layer and a hand-built Requester layer are the same service", () =>
      Effect.gen(function*() {
        const p = probe()
        const handBuilt = Layer.succeed(Permission.Requester, {
          request: () => Effect.succeed(Permission.deny("hand-built"))
        })
        const [a] = yield* Executor.run(Toolkit.make(writeTool(p)), [writeCall]).pipe(Effect.provide(handBuilt))
        expect(modelText(a)).toBe("Error: permission denied: write 1 lines to src/a.ts: hand-built")
      }))

    it.effect("the Requester is a Context.Reference: read with nothing provided, it is the default that allows", () =>
      Effect.gen(function*() {
        // no layer provided, and nothing in R
        const requester: Effect.Effect.Success<typeof Permission.Requester> = yield* Permission.Requester
        const decision = yield* requester.request({
          callId: "c",
          tool: "t",
          action: "write",
          description: "anything",
          path: undefined,
          parameters: {},
          annotations: {},
          preview: undefined,
          confined: undefined
        })
        expect(decision).toEqual(Permission.allow)
        // a provided one replaces it
        const provided = yield* Permission.Requester.pipe(
          Effect.provide(Permission.layer(() => Effect.succeed(Permission.deny("no"))))
        )
        expect(provided).not.toBe(requester)
      }))
  })
})
