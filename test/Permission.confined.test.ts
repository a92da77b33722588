/**
 * `confined`: a tool says, per call, what it runs confined by; the permission request carries it, so a policy can
 * let confined calls through and ask about the rest. The workspace tools say `workspace:<root>` for their paths and
 * nothing for `bash`. A claim, never checked: these tests pin what reaches the policy, not any enforcement.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Executor, Permission, Tool, Toolkit } from "../src/index.js"
import * as Workspace from "../src/Workspace.js"
import { call, makeRoot, text } from "./fixtures/workspace.js"

/** A policy that allows confined calls without asking and asks `prompt` about the rest. */
const confinedOrAsk = (asked: Array<string>, prompt: (request: Permission.PermissionRequest) => Permission.Decision) =>
  Permission.layer((request) =>
    Effect.sync(() => {
      if (request.confined !== undefined) return Permission.allow
      asked.push(request.description)
      return prompt(request)
    })
  )

describe("confined", () => {
  it.effect("the request carries what the call says it is confined by, per call; nothing for a tool that says nothing", () =>
    Effect.gen(function*() {
      const requests: Array<Permission.PermissionRequest> = []
      const Run = Tool.make("run", {
        description: "Run a command, in a container when asked",
        parameters: { command: Schema.String, container: Schema.optional(Schema.String) },
        permission: { action: "execute", describe: ({ command }) => command },
        confined: ({ container }) => container === undefined ? undefined : `container:${container}`,
        handler: () => Effect.succeed("ran")
      })
      const Plain = Tool.make("plain", {
        description: "Says nothing about confinement",
        permission: { action: "execute" },
        handler: () => Effect.succeed("ran")
      })
      yield* Executor.run(Toolkit.make(Run, Plain), [
        { id: "1", name: "run", arguments: { command: "ls", container: "abc" } },
        { id: "2", name: "run", arguments: { command: "ls" } },
        { id: "3", name: "plain", arguments: {} }
      ]).pipe(
        Effect.provide(Permission.layer((request) => Effect.sync(() => (requests.push(request), Permission.allow))))
      )
      expect(requests.map((r) => [r.callId, r.confined])).toEqual([
        ["1", "container:abc"],
        ["2", undefined],
        ["3", undefined]
      ])
    }))

  it.effect("a confined function that throws is that call's defect, and nobody is asked", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      const Broken = Tool.make("broken", {
        description: "Its confinement throws",
        permission: { action: "write" },
        confined: () => {
          throw new Error("no root")
        },
        handler: () => Effect.succeed("ran")
      })
      const [outcome] = yield* Executor.run(Toolkit.make(Broken), [{ id: "1", name: "broken", arguments: {} }]).pipe(
        Effect.provide(confinedOrAsk(asked, () => Permission.allow))
      )
      expect(text(outcome)).toBe(
        "Error: tool \"broken\" panicked: describing the call for permission failed: no root"
      )
      expect(asked).toEqual([])
    }))

  it.effect("Permission.request inside a handler passes what the handler says", () =>
    Effect.gen(function*() {
      const requests: Array<Permission.PermissionRequest> = []
      const Inner = Tool.make("inner", {
        description: "Asks mid-call",
        handler: () => Permission.request({ action: "network", description: "fetch", confined: "sandbox:net" })
      })
      yield* Tool.execute(Inner, { id: "1", arguments: {} }).pipe(
        Effect.provide(Permission.layer((request) => Effect.sync(() => (requests.push(request), Permission.allow))))
      )
      expect(requests[0]).toMatchObject({ callId: "1", tool: "inner", confined: "sandbox:net" })
    }))

  it.live("a policy that lets confined calls through asks about bash, and about nothing the workspace confines", () =>
    Effect.scoped(Effect.gen(function*() {
      const root = makeRoot({ "a.txt": "one\n" })
      const kit = yield* Workspace.toolkit({ root })
      const asked: Array<string> = []
      const requests: Array<Permission.PermissionRequest> = []
      const policy = Permission.layer((request) =>
        Effect.sync(() => {
          requests.push(request)
          if (request.confined !== undefined) return Permission.allow
          asked.push(request.description)
          return Permission.deny("not without a person")
        })
      )
      const outcomes = yield* Executor.run(kit, [
        call("read_file", { path: "a.txt" }),
        call("write_file", { path: "b.txt", content: "two\n" }),
        call("edit_file", { path: "a.txt", old_string: "one", new_string: "uno" }),
        call("bash", { command: "echo hi" })
      ]).pipe(Effect.provide(policy))
      expect(outcomes.map(text)).toEqual([
        expect.stringContaining("one"),
        "created b.txt (1 lines)",
        expect.stringContaining("uno"),
        "Error: permission denied: echo hi: not without a person"
      ])
      // only bash was asked about; the writes were let through as confined to the root
      expect(asked).toEqual(["echo hi"])
      // (in the order the calls got their turn: edit_file waits for read_file on a.txt)
      expect(requests.map((r) => [r.tool, r.confined]).sort()).toEqual([
        ["bash", undefined],
        ["edit_file", `workspace:${root}`],
        ["write_file", `workspace:${root}`]
      ])
    })).pipe(Effect.provide(NodeContext.layer)))

  it("every workspace tool with paths says it is confined to the root; bash says nothing", () =>
    Effect.runPromise(
      Effect.scoped(Effect.gen(function*() {
        const root = makeRoot()
        // fetch reads the network, not the workspace: it claims nothing
        const kit = yield* Workspace.toolkit({ root, fetch: true })
        const claims = Object.fromEntries(kit.tools.map((tool) => [tool.name, tool[Tool.KernelId].confined?.({})]))
        expect(claims).toEqual({
          read_file: `workspace:${root}`,
          write_file: `workspace:${root}`,
          edit_file: `workspace:${root}`,
          bash: undefined,
          glob: `workspace:${root}`,
          grep: `workspace:${root}`,
          list_dir: `workspace:${root}`,
          apply_patch: `workspace:${root}`,
          fetch: undefined
        })
      })).pipe(Effect.provide(NodeContext.layer))
    ))
})
