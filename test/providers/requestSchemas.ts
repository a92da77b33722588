/**
 * The request side of each provider's API, as Effect Schemas written from its documentation: what a request's
 * messages may hold, and the rules the API enforces across messages (every call answered, in the place the API
 * wants the answer). The round-trip tests decode what `results` produced with these, with excess properties
 * refused, so a field a provider does not document (a result's `details`, say) fails the test.
 *
 * - OpenAI chat: https://platform.openai.com/docs/api-reference/chat/create (messages)
 * - OpenAI Responses: https://platform.openai.com/docs/api-reference/responses/create (input items)
 * - Anthropic: https://docs.anthropic.com/en/api/messages (messages, tool_result blocks)
 * - Gemini: https://ai.google.dev/api/generate-content (contents, parts)
 */
import { Schema } from "effect"

const dataUrl = (types: string) =>
  Schema.String.pipe(Schema.pattern(new RegExp(`^data:(${types});base64,[A-Za-z0-9+/=]+$`)))
const imageDataUrl = dataUrl("image/png|image/jpeg|image/gif|image/webp")
const pdfDataUrl = dataUrl("application/pdf")
const Base64 = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9+/]*={0,2}$/))
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const ToolName = Schema.String.pipe(Schema.pattern(/^[a-zA-Z0-9_-]{1,64}$/))

// ---------------------------------------------------------------------------------------------------------------
// OpenAI chat completions
// ---------------------------------------------------------------------------------------------------------------

export namespace Chat {
  export const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
  const RefusalPart = Schema.Struct({ type: Schema.Literal("refusal"), refusal: Schema.String })
  export const ImagePart = Schema.Struct({
    type: Schema.Literal("image_url"),
    image_url: Schema.Struct({
      url: Schema.Union(Schema.String.pipe(Schema.startsWith("https://")), imageDataUrl),
      detail: Schema.optional(Schema.Literal("auto", "low", "high"))
    })
  })
  export const AudioPart = Schema.Struct({
    type: Schema.Literal("input_audio"),
    input_audio: Schema.Struct({ data: Base64, format: Schema.Literal("wav", "mp3") })
  })
  export const FilePart = Schema.Struct({
    type: Schema.Literal("file"),
    file: Schema.Struct({
      file_data: Schema.optional(pdfDataUrl),
      file_id: Schema.optional(Schema.String),
      filename: Schema.optional(Schema.String)
    })
  })
  const System = Schema.Struct({
    role: Schema.Literal("system", "developer"),
    content: Schema.Union(Schema.String, Schema.Array(TextPart)),
    name: Schema.optional(Schema.String)
  })
  export const User = Schema.Struct({
    role: Schema.Literal("user"),
    content: Schema.Union(Schema.String, Schema.NonEmptyArray(Schema.Union(TextPart, ImagePart, AudioPart, FilePart))),
    name: Schema.optional(Schema.String)
  })
  const ToolCall = Schema.Struct({
    id: Schema.String,
    type: Schema.Literal("function"),
    function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
  })
  const Assistant = Schema.Struct({
    role: Schema.Literal("assistant"),
    content: Schema.optional(
      Schema.NullOr(Schema.Union(Schema.String, Schema.Array(Schema.Union(TextPart, RefusalPart))))
    ),
    refusal: Schema.optional(Schema.NullOr(Schema.String)),
    tool_calls: Schema.optional(Schema.Array(ToolCall)),
    name: Schema.optional(Schema.String)
  })
  export const Tool = Schema.Struct({
    role: Schema.Literal("tool"),
    tool_call_id: Schema.String,
    content: Schema.Union(Schema.String, Schema.Array(TextPart))
  })
  export const Message = Schema.Union(System, User, Assistant, Tool)

  /** "An assistant message with `tool_calls` must be followed by tool messages responding to each call id." */
  export const Messages = Schema.NonEmptyArray(Message).pipe(Schema.filter((messages) => {
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]
      if (message.role !== "assistant" || message.tool_calls === undefined || message.tool_calls.length === 0) continue
      const answers = new Set<string>()
      let j = i + 1
      for (; j < messages.length && messages[j].role === "tool"; j++) {
        answers.add((messages[j] as typeof Tool.Type).tool_call_id)
      }
      const asked = message.tool_calls.map((call) => call.id)
      if (j - i - 1 !== asked.length || asked.some((id) => !answers.has(id))) {
        return `the assistant message ${i} asked for ${asked.join(", ")}; the tool messages after it answer ${
          [...answers].join(", ")
        }`
      }
    }
    return true
  }))

  export const Request = Schema.Struct({
    model: Schema.String,
    messages: Messages,
    tools: Schema.optional(Schema.Array(Schema.Struct({
      type: Schema.Literal("function"),
      function: Schema.Struct({
        name: ToolName,
        description: Schema.optional(Schema.String),
        parameters: Schema.optional(JsonObject),
        strict: Schema.optional(Schema.NullOr(Schema.Boolean))
      })
    })))
  })
}

// ---------------------------------------------------------------------------------------------------------------
// OpenAI Responses
// ---------------------------------------------------------------------------------------------------------------

export namespace Responses {
  const InputText = Schema.Struct({ type: Schema.Literal("input_text"), text: Schema.String })
  const InputImage = Schema.Struct({
    type: Schema.Literal("input_image"),
    image_url: Schema.optional(Schema.Union(Schema.String.pipe(Schema.startsWith("https://")), imageDataUrl)),
    file_id: Schema.optional(Schema.String),
    detail: Schema.Literal("auto", "low", "high")
  })
  const InputFile = Schema.Struct({
    type: Schema.Literal("input_file"),
    file_data: Schema.optional(pdfDataUrl),
    file_id: Schema.optional(Schema.String),
    file_url: Schema.optional(Schema.String),
    filename: Schema.optional(Schema.String)
  })
  const Status = Schema.optional(Schema.Literal("in_progress", "completed", "incomplete"))
  export const FunctionCallOutput = Schema.Struct({
    type: Schema.Literal("function_call_output"),
    call_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
    output: Schema.Union(Schema.String, Schema.Array(Schema.Union(InputText, InputImage, InputFile))),
    id: Schema.optional(Schema.String),
    status: Status
  })
  const FunctionCall = Schema.Struct({
    type: Schema.Literal("function_call"),
    call_id: Schema.String,
    name: Schema.String,
    arguments: Schema.String,
    id: Schema.optional(Schema.String),
    status: Status
  })
  const Reasoning = Schema.Struct({
    type: Schema.Literal("reasoning"),
    id: Schema.String,
    summary: Schema.Array(Schema.Unknown),
    encrypted_content: Schema.optional(Schema.NullOr(Schema.String))
  })
  const OutputMessage = Schema.Struct({
    type: Schema.Literal("message"),
    id: Schema.String,
    role: Schema.Literal("assistant"),
    status: Status,
    content: Schema.Array(Schema.Struct({
      type: Schema.Literal("output_text"),
      text: Schema.String,
      annotations: Schema.Array(Schema.Unknown)
    }))
  })
  const InputMessage = Schema.Struct({
    type: Schema.optional(Schema.Literal("message")),
    role: Schema.Literal("user", "system", "developer"),
    content: Schema.Union(Schema.String, Schema.Array(Schema.Union(InputText, InputImage, InputFile)))
  })
  export const InputItem = Schema.Union(InputMessage, OutputMessage, Reasoning, FunctionCall, FunctionCallOutput)

  /** "No tool call found for function call output with call_id ...": every output answers an earlier call. */
  export const Input = Schema.Array(InputItem).pipe(Schema.filter((items) => {
    const asked = new Set<string>()
    for (const item of items) {
      if (item.type === "function_call") asked.add(item.call_id)
      if (item.type === "function_call_output" && !asked.has(item.call_id)) {
        return `no tool call found for function call output with call_id ${item.call_id}`
      }
    }
    return true
  }))

  export const Request = Schema.Struct({
    model: Schema.String,
    input: Schema.Union(Schema.String, Input),
    tools: Schema.optional(Schema.Array(Schema.Struct({
      type: Schema.Literal("function"),
      name: ToolName,
      description: Schema.optional(Schema.String),
      parameters: Schema.optional(JsonObject),
      strict: Schema.optional(Schema.Boolean)
    })))
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Anthropic Messages
// ---------------------------------------------------------------------------------------------------------------

export namespace Anthropic {
  /** "text content blocks must be non-empty" */
  const Text = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String.pipe(Schema.minLength(1)) })
  const Image = Schema.Struct({
    type: Schema.Literal("image"),
    source: Schema.Union(
      Schema.Struct({
        type: Schema.Literal("base64"),
        media_type: Schema.Literal("image/jpeg", "image/png", "image/gif", "image/webp"),
        data: Base64
      }),
      Schema.Struct({ type: Schema.Literal("url"), url: Schema.String })
    )
  })
  const Document = Schema.Struct({
    type: Schema.Literal("document"),
    source: Schema.Union(
      Schema.Struct({ type: Schema.Literal("base64"), media_type: Schema.Literal("application/pdf"), data: Base64 }),
      Schema.Struct({ type: Schema.Literal("text"), media_type: Schema.Literal("text/plain"), data: Schema.String })
    ),
    title: Schema.optional(Schema.String)
  })
  const ToolUse = Schema.Struct({
    type: Schema.Literal("tool_use"),
    id: Schema.String,
    name: Schema.String,
    input: JsonObject
  })
  const Thinking = Schema.Struct({
    type: Schema.Literal("thinking"),
    thinking: Schema.String,
    signature: Schema.String
  })
  export const ToolResult = Schema.Struct({
    type: Schema.Literal("tool_result"),
    tool_use_id: Schema.String,
    content: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.Union(Text, Image, Document)))),
    is_error: Schema.optional(Schema.Boolean)
  })
  export const Message = Schema.Struct({
    role: Schema.Literal("user", "assistant"),
    content: Schema.Union(
      Schema.String.pipe(Schema.minLength(1)),
      Schema.NonEmptyArray(Schema.Union(Text, Image, Document, ToolUse, Thinking, ToolResult))
    )
  })

  /**
   * "Each tool_use block must have a corresponding tool_result block in the next message", and "tool_result
   * blocks must come first in the content array" of that user message.
   */
  export const Messages = Schema.NonEmptyArray(Message).pipe(Schema.filter((messages) => {
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]
      if (message.role !== "assistant" || typeof message.content === "string") continue
      const asked = message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : []))
      if (asked.length === 0) continue
      const next = messages[i + 1]
      if (next === undefined || next.role !== "user" || typeof next.content === "string") {
        return `message ${i} used tools; the next message is not a user message of tool_result blocks`
      }
      const results = next.content.findIndex((block) => block.type !== "tool_result")
      const answered = next.content.slice(0, results === -1 ? undefined : results).map((block) =>
        (block as typeof ToolResult.Type).tool_use_id
      )
      if (next.content.slice(answered.length).some((block) => block.type === "tool_result")) {
        return `message ${i + 1}: tool_result blocks must come first`
      }
      if (asked.join() !== answered.join()) {
        return `message ${i} asked for ${asked.join()}, got answers for ${answered.join()}`
      }
    }
    return true
  }))

  export const Request = Schema.Struct({
    model: Schema.String,
    max_tokens: Schema.Int,
    messages: Messages,
    tools: Schema.optional(Schema.Array(Schema.Struct({
      name: ToolName,
      description: Schema.optional(Schema.String),
      input_schema: Schema.Struct({ type: Schema.Literal("object") }, JsonObject)
    })))
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Gemini generateContent
// ---------------------------------------------------------------------------------------------------------------

export namespace Gemini {
  const Blob = Schema.Struct({ mimeType: Schema.String, data: Base64 })
  const Meta = { thought: Schema.optional(Schema.Boolean), thoughtSignature: Schema.optional(Schema.String) }
  export const FunctionResponse = Schema.Struct({
    id: Schema.optional(Schema.String),
    name: Schema.String,
    response: JsonObject,
    parts: Schema.optional(Schema.Array(Schema.Struct({
      inlineData: Schema.Struct({
        mimeType: Schema.Literal("image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain"),
        data: Base64
      })
    }))),
    willContinue: Schema.optional(Schema.Boolean)
  })
  const FunctionCall = Schema.Struct({
    id: Schema.optional(Schema.String),
    name: Schema.String,
    args: Schema.optional(JsonObject)
  })
  export const Part = Schema.Union(
    Schema.Struct({ text: Schema.String, ...Meta }),
    Schema.Struct({ inlineData: Blob, ...Meta }),
    Schema.Struct({ functionCall: FunctionCall, ...Meta }),
    Schema.Struct({ functionResponse: FunctionResponse, ...Meta })
  )
  export const Content = Schema.Struct({
    role: Schema.optional(Schema.Literal("user", "model")),
    parts: Schema.NonEmptyArray(Part)
  })

  /**
   * "The number of function response parts should be equal to the number of function call parts of the function
   * call turn", in the user content right after it, with the same names in the same order.
   */
  export const Contents = Schema.NonEmptyArray(Content).pipe(Schema.filter((contents) => {
    for (let i = 0; i < contents.length; i++) {
      const content = contents[i]
      if (content.role !== "model") continue
      const asked = content.parts.flatMap((part) => ("functionCall" in part ? [part.functionCall.name] : []))
      if (asked.length === 0) continue
      const next = contents[i + 1]
      const answered = next === undefined || next.role !== "user"
        ? []
        : next.parts.flatMap((part) => ("functionResponse" in part ? [part.functionResponse.name] : []))
      if (asked.join() !== answered.join()) {
        return `content ${i} called ${asked.join()}, got responses for ${answered.join()}`
      }
    }
    return true
  }))

  export const Request = Schema.Struct({
    contents: Contents,
    tools: Schema.optional(Schema.Array(Schema.Struct({
      functionDeclarations: Schema.Array(Schema.Struct({
        name: ToolName,
        description: Schema.String,
        parameters: Schema.optional(JsonObject)
      }))
    })))
  })
}

/** Decodes with excess properties refused: a field the provider does not document is an error. */
export const strictly = { onExcessProperty: "error", errors: "all" } as const
