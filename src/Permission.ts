/**
 * Asking before a call runs.
 *
 * A tool declares what it is about to do (`permission: { action, describe?, path?, preview? }`); before such a
 * call runs, the executor builds a {@link PermissionRequest} and asks the {@link Requester} service, which answers
 * {@link allow} or {@link deny}. A denied call never starts and completes with `PermissionDenied`. No requester
 * installed means allowed, so tools run unchanged in tests and in hosts that do not ask.
 *
 * Annotations (`readOnly`, `destructive`, ...) travel in the request as hints from the tool's author or a remote
 * server. A policy may use them to ask *more* (prompt for anything destructive), never alone to allow: a server
 * that calls its delete "read-only" must not get the delete past the prompt.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import type { Annotations } from "./internal/context.js"
import { currentCall } from "./internal/context.js"
import { PermissionDenied } from "./ToolError.js"

/**
 * What a tool declares about the calls that need permission, as functions of the decoded parameters.
 *
 * - `action`: a short verb a policy keys on (`"write"`, `"execute"`, `"network"`).
 * - `describe`: one line a person reads (`"write 12 lines to src/a.ts"`); defaults to `<tool> (<action>)`.
 * - `path`: the file or resource the call touches, when there is one.
 * - `preview`: an Effect producing what the call would change (a unified diff); its failure `E` is the call's
 *   failure, so it is part of the tool's `Tool.Failure`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Spec<in P, out R = never, out E = unknown> {
  readonly action: string
  readonly describe?: ((params: P) => string) | undefined
  readonly path?: ((params: P) => string | undefined) | undefined
  readonly preview?: ((params: P) => Effect.Effect<string | undefined, E, R>) | undefined
}

/**
 * One question to the requester.
 *
 * @since 0.1.0
 * @category models
 */
export interface PermissionRequest {
  readonly callId: string
  /** The tool's name. */
  readonly tool: string
  readonly action: string
  readonly description: string
  readonly path: string | undefined
  /** The decoded parameters of the call. */
  readonly parameters: unknown
  /** Hints only: may make a policy stricter, never allow on their own. */
  readonly annotations: Annotations
  readonly preview: string | undefined
  /**
   * What the call says it runs confined by (`"workspace:/abs/root"`, `"container:abc"`; the tool's `confined`
   * option), `undefined` for a call that is not confined. A policy may let confined calls through without asking
   * and ask about the rest: it is the tool author's claim (the workspace tools check every path against their
   * root), never enforced by the executor, so trust it as far as you trust the tool.
   */
  readonly confined: string | undefined
}

/**
 * The requester's answer.
 *
 * @since 0.1.0
 * @category models
 */
export type Decision =
  | { readonly _tag: "Allow" }
  | { readonly _tag: "Deny"; readonly reason: string | undefined }

/**
 * The answer that lets the call run.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Permission } from "effect-agent-tools"
 *
 * const allowAll = Permission.layer(() => Effect.succeed(Permission.allow))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const allow: Decision = { _tag: "Allow" }

/**
 * The answer that refuses the call, with a reason the model will read.
 *
 * @example
 * ```ts
 * import { Permission } from "effect-agent-tools"
 *
 * const decision = Permission.deny("writes outside src/ need a review")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const deny = (reason?: string): Decision => ({ _tag: "Deny", reason })

/** The requester when none is provided: every call is allowed. */
const allowEverything = { request: (): Effect.Effect<Decision> => Effect.succeed(allow) }

/**
 * The service that answers permission requests: a terminal prompt, a UI dialog, a policy engine. A
 * `Context.Reference`: when none is provided, the default allows every call (and a tool's `preview` is not
 * computed), so tools run unchanged in tests and in hosts that do not ask.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Permission } from "effect-agent-tools"
 *
 * const ReadOnlyPolicy = Layer.succeed(Permission.Requester, {
 *   request: (request) =>
 *     Effect.succeed(request.action === "read" ? Permission.allow : Permission.deny("this session is read-only"))
 * })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Requester extends Context.Reference<Requester>()("effect-agent-tools/Permission/Requester", {
  defaultValue: (): { readonly request: (request: PermissionRequest) => Effect.Effect<Decision> } => allowEverything
}) {}

/**
 * A requester from a function.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Permission } from "effect-agent-tools"
 *
 * const NoBash = Permission.layer((request) =>
 *   Effect.succeed(request.tool === "bash" ? Permission.deny("no shell today") : Permission.allow)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (request: (request: PermissionRequest) => Effect.Effect<Decision>): Layer.Layer<Requester> =>
  Layer.succeed(Requester, { request })

/**
 * Asks the installed requester; with none installed the answer is {@link allow} (the default requester's). Inside a handler the call id,
 * tool name and annotations are filled in from the current call.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Permission } from "effect-agent-tools"
 *
 * const program = Effect.gen(function*() {
 *   const decision = yield* Permission.request({ action: "network", description: "fetch https://example.com" })
 *   return decision._tag === "Allow"
 * })
 * ```
 *
 * @since 0.1.0
 * @category asking
 */
export const request = (
  request: {
    readonly action: string
    readonly description: string
    readonly path?: string | undefined
    readonly parameters?: unknown
    readonly preview?: string | undefined
    readonly confined?: string | undefined
  }
): Effect.Effect<Decision> =>
  Effect.flatMap(Requester, (requester) =>
    Effect.flatMap(FiberRef.get(currentCall), (call) =>
      requester.request({
        callId: call?.id ?? "",
        tool: call?.name ?? "",
        action: request.action,
        description: request.description,
        path: request.path,
        parameters: request.parameters,
        annotations: call?.annotations ?? {},
        preview: request.preview,
        confined: request.confined
      })))

/**
 * Asks, and fails with `PermissionDenied` when refused. A handler failing with it ends its call with that error.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Permission } from "effect-agent-tools"
 *
 * const deleteAll = Effect.gen(function*() {
 *   yield* Permission.require({ action: "delete", description: "delete every file in /tmp/cache" })
 *   // ... only reached when allowed
 * })
 * ```
 *
 * @since 0.1.0
 * @category asking
 */
export const require = (
  options: {
    readonly action: string
    readonly description: string
    readonly path?: string | undefined
    readonly parameters?: unknown
    readonly preview?: string | undefined
    readonly confined?: string | undefined
  }
): Effect.Effect<void, PermissionDenied> =>
  Effect.flatMap(request(options), (decision) =>
    decision._tag === "Allow"
      ? Effect.void
      : Effect.flatMap(FiberRef.get(currentCall), (call) =>
        Effect.fail(
          new PermissionDenied({
            tool: call?.name ?? "",
            description: options.description,
            ...(decision.reason === undefined ? {} : { reason: decision.reason })
          })
        )))
