/**
 * A scripted model server on 127.0.0.1, for tests that drive a real @effect/ai language model: it speaks the
 * OpenAI Responses API (`POST /v1/responses`, what `@effect/ai-openai` 0.41 calls) or the Anthropic Messages API
 * (`POST /v1/messages`, what `@effect/ai-anthropic` 0.27 calls), and answers each request with the next turn of
 * a script: as one JSON body, or as server-sent events when the request says `stream: true` (the event sequence
 * each API documents: `response.created` ... `response.completed`; `message_start` ... `message_stop`).
 *
 * ```ts
 * const server = yield* ScriptedServer.make({
 *   dialect: "openai",                       // or "anthropic"
 *   turns: [
 *     { calls: [{ name: "get_weather", arguments: { location: "Paris" } }] },   // ids minted: call_<turn>_<i>
 *     (request) => ({ text: `saw ${request.body.input.length} items` }),       // a turn can read the request
 *     { text: "partial", stall: true }       // streams its start, then waits until the client goes away
 *   ]
 * })
 * const response = yield* LanguageModel.generateText({ prompt: "hi" }).pipe(Effect.provide(server.layer))
 * yield* server.requests   // every request received, its body parsed, in order
 * yield* server.aborted    // how many requests the client abandoned before the answer was complete
 * ```
 *
 * - `layer` is a `LanguageModel` of that dialect's provider package pointed at the server (model `gpt-4.1` or
 *   `claude-sonnet-4-5`, over the platform's fetch client); `url` is the `apiUrl` it uses.
 * - A turn: `text` (streamed as deltas of `chunk` characters, default 8), `calls` (each `{ id?, name, arguments }`,
 *   `arguments` a JSON string, which may be malformed for OpenAI, or an object), `stall`, `delayMillis` (real time
 *   before answering), or `status` + `error` for an HTTP error answer.
 * - A request past the end of the script is answered 500 `script exhausted`. Request bodies over 16 MiB are
 *   refused with 413. Closing the scope closes every connection, stalled ones included.
 */
import type { LanguageModel } from "@effect/ai"
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer, Redacted } from "effect"
import type { Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export type Dialect = "openai" | "anthropic"

export interface ScriptedCall {
  readonly id?: string | undefined
  readonly name: string
  readonly arguments: string | Record<string, unknown>
}

export interface Turn {
  readonly text?: string | undefined
  readonly calls?: ReadonlyArray<ScriptedCall> | undefined
  /** Streamed: send the start of the answer, then hold the connection until the client leaves. Not streamed: never answer. */
  readonly stall?: boolean | undefined
  readonly delayMillis?: number | undefined
  readonly status?: number | undefined
  readonly error?: string | undefined
  /** Characters per streamed text delta. */
  readonly chunk?: number | undefined
}

export interface Recorded {
  readonly path: string
  readonly body: any
}

export type Script = ReadonlyArray<Turn | ((request: Recorded) => Turn)>

export interface ScriptedServer {
  readonly url: string
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  readonly requests: Effect.Effect<ReadonlyArray<Recorded>>
  readonly aborted: Effect.Effect<number>
}

const MAX_BODY = 16 * 1024 * 1024

const argumentsText = (call: ScriptedCall): string =>
  typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)

const argumentsObject = (call: ScriptedCall): Record<string, unknown> =>
  typeof call.arguments === "string" ? JSON.parse(call.arguments) : call.arguments

const chunks = (text: string, size: number): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// OpenAI Responses
// ---------------------------------------------------------------------------------------------------------------

const openAiResponse = (n: number, output: ReadonlyArray<unknown>, status: string) => ({
  id: `resp_${n}`,
  object: "response",
  created_at: 1741476542,
  status,
  error: null,
  incomplete_details: null,
  instructions: null,
  model: "gpt-4.1",
  output,
  parallel_tool_calls: true,
  tools: [],
  tool_choice: "auto",
  metadata: {},
  temperature: null,
  top_p: null,
  usage: {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15
  }
})

const openAiItems = (n: number, turn: Turn) => {
  const items: Array<any> = []
  if (turn.text !== undefined) {
    items.push({
      id: `msg_${n}`,
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: turn.text, annotations: [] }]
    })
  }
  for (const [i, call] of (turn.calls ?? []).entries()) {
    items.push({
      id: `fc_${n}_${i}`,
      type: "function_call",
      call_id: call.id ?? `call_${n}_${i}`,
      name: call.name,
      arguments: argumentsText(call),
      status: "completed"
    })
  }
  return items
}

function* openAiEvents(n: number, turn: Turn): Generator<readonly [string, unknown], void> {
  let sequence = 0
  const event = (type: string, fields: object) => [type, { type, sequence_number: sequence++, ...fields }] as const
  yield event("response.created", { response: openAiResponse(n, [], "in_progress") })
  const items = openAiItems(n, turn)
  for (const [index, item] of items.entries()) {
    if (item.type === "message") {
      yield event("response.output_item.added", {
        output_index: index,
        item: { ...item, content: [], status: "in_progress" }
      })
      const part = { type: "output_text", text: "", annotations: [] }
      yield event("response.content_part.added", { output_index: index, content_index: 0, item_id: item.id, part })
      for (const delta of chunks(turn.text ?? "", turn.chunk ?? 8)) {
        yield event("response.output_text.delta", { output_index: index, content_index: 0, item_id: item.id, delta })
      }
      if (turn.stall === true) return
      const done = { output_index: index, content_index: 0, item_id: item.id }
      yield event("response.output_text.done", { ...done, text: turn.text })
      yield event("response.content_part.done", { ...done, part: item.content[0] })
      yield event("response.output_item.done", { output_index: index, item })
    } else {
      yield event("response.output_item.added", {
        output_index: index,
        item: { ...item, arguments: "", status: "in_progress" }
      })
      yield event("response.function_call_arguments.delta", {
        output_index: index,
        item_id: item.id,
        delta: item.arguments
      })
      yield event("response.function_call_arguments.done", {
        output_index: index,
        item_id: item.id,
        arguments: item.arguments
      })
      yield event("response.output_item.done", { output_index: index, item })
    }
  }
  if (turn.stall === true) return
  yield event("response.completed", { response: openAiResponse(n, items, "completed") })
}

// ---------------------------------------------------------------------------------------------------------------
// Anthropic Messages
// ---------------------------------------------------------------------------------------------------------------

const anthropicMessage = (n: number, content: ReadonlyArray<unknown>, stopReason: string | null) => ({
  id: `msg_${n}`,
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content,
  stop_reason: stopReason,
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 5 }
})

const anthropicBlocks = (n: number, turn: Turn) => {
  const blocks: Array<any> = []
  if (turn.text !== undefined) blocks.push({ type: "text", text: turn.text })
  for (const [i, call] of (turn.calls ?? []).entries()) {
    blocks.push({ type: "tool_use", id: call.id ?? `toolu_${n}_${i}`, name: call.name, input: argumentsObject(call) })
  }
  return blocks
}

const stopReason = (turn: Turn) => ((turn.calls ?? []).length > 0 ? "tool_use" : "end_turn")

function* anthropicEvents(n: number, turn: Turn): Generator<readonly [string, unknown], void> {
  const event = (type: string, fields: object) => [type, { type, ...fields }] as const
  yield event("message_start", { message: anthropicMessage(n, [], null) })
  let index = 0
  if (turn.text !== undefined) {
    yield event("content_block_start", { index, content_block: { type: "text", text: "" } })
    for (const text of chunks(turn.text, turn.chunk ?? 8)) {
      yield event("content_block_delta", { index, delta: { type: "text_delta", text } })
    }
    if (turn.stall === true) return
    yield event("content_block_stop", { index })
    index++
  }
  for (const [i, call] of (turn.calls ?? []).entries()) {
    const id = call.id ?? `toolu_${n}_${i}`
    yield event("content_block_start", { index, content_block: { type: "tool_use", id, name: call.name, input: {} } })
    yield event("content_block_delta", {
      index,
      delta: { type: "input_json_delta", partial_json: argumentsText(call) }
    })
    yield event("content_block_stop", { index })
    index++
  }
  if (turn.stall === true) return
  yield event("message_delta", {
    delta: { stop_reason: stopReason(turn), stop_sequence: null },
    usage: { output_tokens: 5 }
  })
  yield event("message_stop", {})
}

// ---------------------------------------------------------------------------------------------------------------
// the server
// ---------------------------------------------------------------------------------------------------------------

const readBody = (request: http.IncomingMessage): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    const parts: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY) {
        resolve(undefined)
        request.destroy()
        return
      }
      parts.push(chunk)
    })
    request.on("end", () => resolve(Buffer.concat(parts).toString("utf8")))
    request.on("error", reject)
  })

const layerFor = (dialect: Dialect, url: string): Layer.Layer<LanguageModel.LanguageModel> =>
  dialect === "openai"
    ? OpenAiLanguageModel.layer({ model: "gpt-4.1" }).pipe(
      Layer.provide(OpenAiClient.layer({ apiUrl: url, apiKey: Redacted.make("sk-test") })),
      Layer.provide(FetchHttpClient.layer)
    )
    : AnthropicLanguageModel.layer({ model: "claude-sonnet-4-5" }).pipe(
      Layer.provide(AnthropicClient.layer({ apiUrl: url, apiKey: Redacted.make("sk-ant-test") })),
      Layer.provide(FetchHttpClient.layer)
    )

export const make = (options: {
  readonly dialect: Dialect
  readonly turns: Script
}): Effect.Effect<ScriptedServer, never, Scope.Scope> => {
  const recorded: Array<Recorded> = []
  let aborted = 0
  const path = options.dialect === "openai" ? "/v1/responses" : "/v1/messages"

  const answer = async (request: http.IncomingMessage, response: http.ServerResponse) => {
    const text = await readBody(request)
    if (text === undefined) {
      response.writeHead(413).end()
      return
    }
    const pathname = new URL(request.url ?? "/", "http://127.0.0.1").pathname
    if (request.method !== "POST" || pathname !== path) {
      response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }))
      return
    }
    const entry: Recorded = { path: pathname, body: JSON.parse(text) }
    const n = recorded.length
    recorded.push(entry)
    const scripted = options.turns[n]
    if (scripted === undefined) {
      response.writeHead(500, { "content-type": "application/json" }).end(
        JSON.stringify({ error: { type: "api_error", message: "script exhausted" } })
      )
      return
    }
    const turn = typeof scripted === "function" ? scripted(entry) : scripted
    let finished = false
    response.on("close", () => {
      if (!finished) aborted++
    })
    if (turn.delayMillis !== undefined) await new Promise((resolve) => setTimeout(resolve, turn.delayMillis))
    if (turn.status !== undefined) {
      finished = true
      response.writeHead(turn.status, { "content-type": "application/json" }).end(
        JSON.stringify({ type: "error", error: { type: "api_error", message: turn.error ?? "scripted error" } })
      )
      return
    }
    if (entry.body.stream !== true) {
      if (turn.stall === true) return
      finished = true
      const body = options.dialect === "openai"
        ? openAiResponse(n, openAiItems(n, turn), "completed")
        : anthropicMessage(n, anthropicBlocks(n, turn), stopReason(turn))
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
      return
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    const events = options.dialect === "openai" ? openAiEvents(n, turn) : anthropicEvents(n, turn)
    for (const [type, data] of events) response.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`)
    if (turn.stall === true) return
    finished = true
    response.end()
  }

  return Effect.map(
    Effect.acquireRelease(
      Effect.async<http.Server>((resume) => {
        const server = http.createServer((request, response) => {
          answer(request, response).catch((error) => {
            if (!response.headersSent) response.writeHead(500)
            response.end(String(error))
          })
        })
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    ),
    (server) => {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const url = options.dialect === "openai" ? `${origin}/v1` : origin
      return {
        url,
        layer: layerFor(options.dialect, url),
        requests: Effect.sync(() => [...recorded]),
        aborted: Effect.sync(() => aborted)
      }
    }
  )
}
