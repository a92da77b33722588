/**
 * MCP 2026-07-28's multi round-trip requests, on the server: how `Tool.elicit`, `McpServer.sample` and
 * `McpServer.listRoots` reach a 2026 client, which the server can no longer send a request.
 *
 * A question a call asks becomes an entry of `inputRequests` in an `input_required` result, under a key (the
 * question's own `key`, else a digest of the question, numbered when the same question comes again); the client
 * answers it and sends the same `tools/call` again with `inputResponses` and the `requestState` it was given. How
 * the call goes on depends on its tool's `replay` (issue 17's contract):
 *
 * - `"safe"`: the call is not kept. The fiber is interrupted once its questions are out (its finalizers run), and
 *   `requestState` carries every answer so far; the retry, in any process that knows the key, runs the handler
 *   again from the start, and each question it asks is answered from those answers, by key, so the handler gets
 *   to where it stopped, and further. Nothing is held between rounds.
 * - anything else: the call is parked in the process that started it, its fiber waiting on its questions, and
 *   `requestState` names it (`p.<instance>.` before the signed token, so a load balancer can route the retry back:
 *   the one thing it must do for such calls). The retry hands the answers to the waiting fiber, and is answered
 *   with whatever the call does next: its result, or its next questions. A parked call that nobody resumes ends
 *   (interrupted) when its state expires; at most `maxParkedCalls` wait at once, the oldest ending first.
 *
 * Either way, a question the retry leaves unanswered reads `cancel` (elicitation) or fails (sampling, roots); an
 * answer that is not of its question's shape is asked again; answers under keys nobody asked are ignored; a call
 * that comes with answers and no state (a client answering ahead) takes the ones its questions' keys match.
 *
 * `requestState` is attacker-controlled input: the SDK's HMAC codec (`createRequestStateCodec`, SHA-256, with a key
 * the host gives or one made per process) signs it, with an expiry, bound to the request (the tool's name and its
 * arguments, as a digest) and to the principal (the request's `Authorization` header, as a digest); every state
 * carries a nonce that this process accepts once. A state that fails any of these is answered as the SDK answers
 * a bad state: `-32602` `Invalid or expired requestState`.
 *
 * @internal
 */
import type { RequestStateCodec, Result, ServerContext } from "@modelcontextprotocol/server"
import { createRequestStateCodec, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server"
import * as Effect from "effect/Effect"
import type * as FiberId from "effect/FiberId"
import * as FiberIds from "effect/FiberId"
import { createHash, randomBytes, randomUUID } from "node:crypto"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/** One question for the client: an embedded `elicitation/create`, `sampling/createMessage` or `roots/list`. */
export interface InputRequest {
  readonly method: "elicitation/create" | "sampling/createMessage" | "roots/list"
  readonly params: Record<string, unknown>
}

/** What a round of a call gives its client: the call's result, or its questions (`input_required`). */
export type RoundOutcome = Result

/** What `requestState` carries, signed. */
type StatePayload =
  | {
    readonly k: "park"
    /** The parked call's id and the process (instance) it waits in. */
    readonly c: string
    readonly i: string
    readonly n: string
  }
  | {
    readonly k: "replay"
    /** The answers so far, by key, and the keys asked in the last round. */
    readonly a: Record<string, unknown>
    readonly q: ReadonlyArray<string>
    readonly n: string
  }

/** What a state is bound to: the principal, the tool, its arguments (digests). */
export interface Binding {
  readonly principal: string
  readonly tool: string
  readonly arguments: string
}

/** A state this process cannot take: tampered, expired, bound to something else, used, or for a call not here. */
export const invalidState = (): ProtocolError =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid or expired requestState", {
    reason: "invalid_request_state"
  })

export const DEFAULT_REQUEST_STATE_TTL_MILLIS = 10 * 60_000
export const DEFAULT_MAX_PARKED_CALLS = 1_000

/** The most bytes of answers a `replay` state carries: past it, the call cannot go on statelessly. */
const MAX_STATE_ANSWER_BYTES = 256 * 1024

/** How long after a question a round waits for the call's other questions, to ask them together. */
const GATHER_MILLIS = 2

/** The prefix of a parked call's state: `p.<instance>.` before the codec's token. */
const PARKED = "p."

// ---------------------------------------------------------------------------------------------------------------
// digests
// ---------------------------------------------------------------------------------------------------------------

/** JSON with object keys sorted, so the same value always digests the same. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>
    return `{${
      Object.keys(record).sort().filter((key) => record[key] !== undefined).map((key) =>
        `${JSON.stringify(key)}:${canonical(record[key])}`
      ).join(",")
    }}`
  }
  return JSON.stringify(value) ?? "null"
}

export const digest = (value: unknown): string =>
  createHash("sha256").update(typeof value === "string" ? value : canonical(value)).digest("base64url")

/** A member of a 2026 request's `_meta` envelope (the SDK lifts the envelope out of `_meta`). */
export const envelopeValue = (ctx: ServerContext, key: string): unknown =>
  (ctx.mcpReq.envelope as Readonly<Record<string, unknown>> | undefined)?.[key]

/** The binding of a `tools/call`: who asked (the `Authorization` header, over HTTP), which tool, which arguments. */
export const bindingOf = (ctx: ServerContext, tool: string, args: unknown): Binding => ({
  principal: digest(ctx.http?.req?.headers.get("authorization") ?? ""),
  tool,
  arguments: digest(args ?? {})
})

/** The key a question goes by when it names none: its digest, numbered from its second time in a call. */
export const questionKey = (request: InputRequest, seen: Map<string, number>): string => {
  const base = `${
    request.method === "elicitation/create" ? "ask" : request.method === "roots/list" ? "roots" : "sample"
  }-${digest(request).slice(0, 12)}`
  const count = (seen.get(base) ?? 0) + 1
  seen.set(base, count)
  return count === 1 ? base : `${base}-${count}`
}

// ---------------------------------------------------------------------------------------------------------------
// requestState
// ---------------------------------------------------------------------------------------------------------------

export interface StateOptions {
  readonly key?: string | Uint8Array | undefined
  readonly ttlMillis: number
}

/**
 * Signs and checks `requestState`: the SDK's codec (HMAC-SHA-256, expiry, binding), and the single use it leaves to
 * the server, a table of the nonces taken, each kept until its state would have expired anyway.
 */
export class RequestStates {
  private readonly codec: RequestStateCodec<StatePayload>
  /** Nonces taken, with when their states expire; oldest first. */
  private readonly taken = new Map<string, number>()

  constructor(options: StateOptions, private readonly maxTaken: number) {
    this.ttlMillis = options.ttlMillis
    this.codec = createRequestStateCodec<StatePayload>({
      key: options.key ?? randomBytes(32),
      ttlSeconds: Math.max(1, Math.ceil(options.ttlMillis / 1000)),
      // the codec binds to what its `ctx` gives; ours is the binding itself (see `asContext`)
      bind: (ctx) => bindingText((ctx as unknown as { readonly binding: Binding }).binding)
    })
  }

  private readonly ttlMillis: number

  mint(payload: StatePayload, binding: Binding, prefix = ""): Promise<string> {
    return this.codec.mint(payload, asContext(binding)).then((token) => prefix + token)
  }

  /** The payload of a state, taken (a second use fails), or the reason it is refused. */
  async take(state: string, binding: Binding): Promise<StatePayload> {
    const token = state.startsWith(PARKED) ? state.slice(state.indexOf(".", PARKED.length) + 1) : state
    const payload = await this.codec.verify(token, asContext(binding))
    if (typeof payload !== "object" || payload === null || typeof payload.n !== "string") {
      throw new Error("malformed payload")
    }
    const now = Date.now()
    for (const [nonce, expires] of this.taken) {
      if (expires > now && this.taken.size < this.maxTaken) break
      this.taken.delete(nonce)
    }
    if (this.taken.has(payload.n)) throw new Error("replayed: this requestState was used before")
    this.taken.set(payload.n, now + this.ttlMillis)
    return payload
  }
}

const bindingText = (binding: Binding): string => `${binding.principal}\n${binding.tool}\n${binding.arguments}`

/** A binding as the codec's `ctx` argument, which it hands only to our `bind`. */
const asContext = (binding: Binding): ServerContext => ({ binding }) as unknown as ServerContext

// ---------------------------------------------------------------------------------------------------------------
// one call, over its rounds
// ---------------------------------------------------------------------------------------------------------------

/** An answer, checked against its question's shape; undefined when it is not one. */
const checkedAnswer = (method: InputRequest["method"], answer: unknown): unknown => {
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) return undefined
  const record = answer as Record<string, unknown>
  switch (method) {
    case "elicitation/create":
      return (record.action === "accept" || record.action === "decline" || record.action === "cancel") &&
          (record.content === undefined || (typeof record.content === "object" && record.content !== null))
        ? answer
        : undefined
    case "sampling/createMessage":
      return typeof record.role === "string" && typeof record.model === "string" &&
          typeof record.content === "object" && record.content !== null
        ? answer
        : undefined
    case "roots/list":
      return Array.isArray(record.roots) ? answer : undefined
  }
}

interface Waiting {
  readonly request: InputRequest
  readonly resume: (answer: unknown) => void
}

/** What a call needs of the server it runs in. */
export interface Host {
  readonly states: RequestStates
  readonly instance: string
  readonly parked: Parked
  readonly ttlMillis: number
  /** Reports what went wrong outside any request (a state that could not be made). */
  readonly report: (message: string) => void
}

/**
 * One `tools/call` of a 2026 client, across its rounds: the answers it has, the questions it waits on, the round
 * being answered (the request whose stream its progress and logs go to), its fiber.
 */
export class ModernCall {
  readonly id = randomUUID()
  /** The request of the round being answered. */
  ctx: ServerContext
  fiber: { readonly unsafeInterruptAsFork: (id: FiberId.FiberId) => void } | undefined = undefined
  /** Answers the client gave, by key: from this round's `inputResponses`, and (replay) the rounds before. */
  private readonly known: Map<string, unknown>
  /** Answers used by this run of the handler: what a `replay` state carries on. */
  private readonly used = new Map<string, unknown>()
  /** Keys asked in the round before this one: left unanswered now, they read `cancel`. */
  private readonly asked: ReadonlySet<string>
  private waiting = new Map<string, Waiting>()
  /** How often each derived key was asked in this run. */
  readonly seen = new Map<string, number>()
  private respond: ((outcome: RoundOutcome | Error) => void) | undefined = undefined
  /** A result that came while no round was open (a parked call that finished on its own). */
  private early: RoundOutcome | Error | undefined = undefined
  private gather: ReturnType<typeof setTimeout> | undefined = undefined
  expires = 0
  /** The capabilities the call needed and its client did not declare: a call that fails after is refused with them. */
  missing: Record<string, object> | undefined = undefined

  constructor(
    readonly mode: "park" | "replay",
    private readonly host: Host,
    /** What the call's states are bound to (a digest of its arguments: made only when a state is). */
    private readonly binding: () => Binding,
    ctx: ServerContext,
    answers: Record<string, unknown> | undefined,
    replayed?: { readonly answers: Record<string, unknown>; readonly asked: ReadonlyArray<string> }
  ) {
    this.ctx = ctx
    this.known = new Map(Object.entries(replayed?.answers ?? {}))
    // a key whose answer the SDK dropped (not an object) was answered wrongly, not left unanswered: asked again
    const dropped = new Set(ctx.mcpReq.droppedInputResponseKeys ?? [])
    const pending = new Set((replayed?.asked ?? []).filter((key) => !dropped.has(key)))
    for (const [key, answer] of Object.entries(answers ?? {})) {
      // a state names the keys it asked: only those are answers; without one, a client may answer ahead
      if (replayed === undefined || pending.has(key)) this.known.set(key, answer)
    }
    this.asked = pending
  }

  /** Opens a round: what it gives its client comes through the promise. */
  open(): Promise<RoundOutcome> {
    return new Promise((resolve, reject) => {
      this.respond = (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome))
      if (this.early !== undefined) {
        const early = this.early
        this.early = undefined
        return this.settle(early)
      }
      if (this.waiting.size > 0) this.arm()
    })
  }

  /**
   * Asks the client, in a call: the answer by key when the client gave one, `undefined` when the question was asked
   * in the round before and left unanswered, else the question goes out with the round's others and the call waits.
   */
  ask(key: string, request: InputRequest): Effect.Effect<unknown> {
    return Effect.async<unknown>((resume) => {
      const given = this.known.has(key) ? checkedAnswer(request.method, this.known.get(key)) : undefined
      if (given !== undefined) {
        this.used.set(key, given)
        return resume(Effect.succeed(given))
      }
      if (this.asked.has(key) && !this.known.has(key)) return resume(Effect.succeed(undefined))
      this.waiting.set(key, { request, resume: (answer) => resume(Effect.succeed(answer)) })
      this.arm()
      return Effect.sync(() => {
        this.waiting.delete(key)
      })
    })
  }

  private arm(): void {
    if (this.gather !== undefined) clearTimeout(this.gather)
    this.gather = setTimeout(() => {
      this.gather = undefined
      void this.askNow()
    }, GATHER_MILLIS)
  }

  /** The call waits on its questions: the round answers `input_required` with them. */
  private async askNow(): Promise<void> {
    if (this.waiting.size === 0 || this.respond === undefined) return
    const inputRequests: Record<string, InputRequest> = {}
    for (const [key, waiting] of this.waiting) inputRequests[key] = waiting.request
    const nonce = randomUUID()
    let state: string
    try {
      if (this.mode === "replay") {
        const answers = Object.fromEntries(this.used)
        if (JSON.stringify(answers).length > MAX_STATE_ANSWER_BYTES) {
          throw new Error(
            `the answers so far are over ${MAX_STATE_ANSWER_BYTES} bytes, more than a requestState carries`
          )
        }
        state = await this.host.states.mint(
          { k: "replay", a: answers, q: Object.keys(inputRequests), n: nonce },
          this.binding()
        )
        this.interrupt()
      } else {
        state = await this.host.states.mint(
          { k: "park", c: this.id, i: this.host.instance, n: nonce },
          this.binding(),
          `${PARKED}${this.host.instance}.`
        )
        this.expires = Date.now() + this.host.ttlMillis
        this.host.parked.park(this)
      }
    } catch (error) {
      this.interrupt()
      return this.settle(error instanceof Error ? error : new Error(String(error)))
    }
    this.settle({ resultType: "input_required", inputRequests, requestState: state } as unknown as Result)
  }

  /**
   * A parked call, resumed by a retry: each question it waits on gets its answer, is asked again when what came is
   * not an answer to it (the SDK drops an entry that is not an object, `ctx.mcpReq.droppedInputResponseKeys`), or
   * reads `cancel` when nothing came for it.
   */
  resume(ctx: ServerContext, answers: Record<string, unknown> | undefined): Promise<RoundOutcome> {
    this.ctx = ctx
    const dropped = new Set(ctx.mcpReq.droppedInputResponseKeys ?? [])
    const waiting = this.waiting
    this.waiting = new Map()
    const round = this.open()
    for (const [key, question] of waiting) {
      const given = answers?.[key]
      const answer = given === undefined ? undefined : checkedAnswer(question.request.method, given)
      if (answer !== undefined) question.resume(answer)
      else if (given !== undefined || dropped.has(key)) this.waiting.set(key, question) // asked again
      else question.resume(undefined)
    }
    if (this.waiting.size > 0) this.arm()
    return round
  }

  /** The call ended: its result (or its failure) answers the round. */
  finished(outcome: RoundOutcome | Error): void {
    if (this.gather !== undefined) clearTimeout(this.gather)
    this.gather = undefined
    if (this.respond === undefined) {
      // between rounds (a parked call whose other branch ended it): the retry gets it; it stays in the table
      this.early = outcome
      return
    }
    this.host.parked.remove(this)
    this.settle(outcome)
  }

  private settle(outcome: RoundOutcome | Error): void {
    const respond = this.respond
    this.respond = undefined
    respond?.(outcome)
  }

  /** Interrupts the call's fiber (its finalizers run); what it asks after that is never asked. */
  interrupt(): void {
    this.fiber?.unsafeInterruptAsFork(FiberIds.none)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the calls parked in this process
// ---------------------------------------------------------------------------------------------------------------

/** The calls parked in this process, oldest first, each until its state expires; at most `max`. */
export class Parked {
  private readonly calls = new Map<string, ModernCall>()
  private timer: ReturnType<typeof setTimeout> | undefined = undefined

  constructor(private readonly max: number) {}

  get size(): number {
    return this.calls.size
  }

  park(call: ModernCall): void {
    this.calls.delete(call.id)
    this.calls.set(call.id, call)
    while (this.calls.size > this.max) {
      const [oldest] = this.calls.values()
      this.calls.delete(oldest.id)
      oldest.interrupt()
    }
    this.schedule()
  }

  /** The parked call a state names, taken out of the table (a state resumes it once). */
  take(id: string): ModernCall | undefined {
    const call = this.calls.get(id)
    if (call === undefined) return undefined
    this.calls.delete(id)
    return call
  }

  remove(call: ModernCall): void {
    this.calls.delete(call.id)
  }

  /** Every parked call ends: the server is stopping. */
  closeAll(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    const calls = [...this.calls.values()]
    this.calls.clear()
    for (const call of calls) call.interrupt()
  }

  /** The next expiry, on one timer for the table. */
  private schedule(): void {
    if (this.timer !== undefined || this.calls.size === 0) return
    const [oldest] = this.calls.values()
    this.timer = setTimeout(() => {
      this.timer = undefined
      const now = Date.now()
      for (const call of [...this.calls.values()]) {
        if (call.expires > now) continue
        this.calls.delete(call.id)
        call.interrupt()
      }
      this.schedule()
    }, Math.max(0, oldest.expires - Date.now()) + 10)
    this.timer.unref()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// a round's request
// ---------------------------------------------------------------------------------------------------------------

/**
 * What a retry names: the state's payload, checked (signature, expiry, binding, single use), or the error to answer
 * with. Undefined for a call with no state.
 */
export const stateOf = async (
  host: Host,
  ctx: ServerContext,
  binding: Binding
): Promise<StatePayload | undefined> => {
  const raw = ctx.mcpReq.requestState()
  if (raw === undefined) return undefined
  if (typeof raw !== "string") throw invalidState()
  try {
    return await host.states.take(raw, binding)
  } catch (error) {
    host.report(`refused a requestState: ${error instanceof Error ? error.message : String(error)}`)
    throw invalidState()
  }
}

export type { StatePayload }
