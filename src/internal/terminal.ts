/**
 * Asking a person at the terminal, and showing them a result: what the `agent-tools` CLI and a toolkit run as a
 * shell program (ShellProgram.ts) share.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as readline from "node:readline"
import type { Readable, Writable } from "node:stream"
import * as Elicitation from "../Elicitation.js"
import * as Permission from "../Permission.js"
import type * as ToolResult from "../ToolResult.js"

/**
 * Asks on the terminal; with no terminal, refuses unless `yes`, and tells `unanswered` (nobody was there to ask:
 * not the same as a person saying no).
 */
export const terminalRequester = (
  yes: boolean,
  unanswered: (request: Permission.PermissionRequest) => void = () => {}
): Layer.Layer<Permission.Requester> =>
  Permission.layer((request) => {
    if (yes) return Effect.succeed(Permission.allow)
    if (process.stdin.isTTY !== true || process.stderr.isTTY !== true) {
      return Effect.sync(() => {
        unanswered(request)
        return Permission.deny("no terminal to ask on; run again with --yes to allow it")
      })
    }
    return Effect.async<Permission.Decision>((resume) => {
      const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
      const preview = request.preview === undefined ? "" : `${request.preview}\n`
      rl.question(
        `${preview}${request.tool} wants to ${request.action}: ${request.description}\nAllow? [y/N] `,
        (a) => {
          rl.close()
          resume(
            Effect.succeed(/^y(es)?$/i.test(a.trim()) ? Permission.allow : Permission.deny("refused at the prompt"))
          )
        }
      )
      return Effect.sync(() => rl.close())
    })
  })

/** The streams a terminal prompt uses; a test gives its own. */
export interface Terminal {
  readonly input: Readable & { readonly isTTY?: boolean | undefined }
  readonly output: Writable & { readonly isTTY?: boolean | undefined }
}

const processTerminal = (): Terminal => ({ input: process.stdin, output: process.stderr })

/** How a field is described next to its name: what it takes, and its default. */
const fieldHint = (field: Elicitation.Field, required: boolean): string => {
  const choices = (options: ReadonlyArray<{ readonly const: string; readonly title: string }>) =>
    options.map((o, i) => `${i + 1}) ${o.title}`).join(", ")
  let kind: string
  if (field.type === "array") {
    kind = `any of ${
      "anyOf" in field.items ? choices(field.items.anyOf) : field.items.enum.join(", ")
    }, comma-separated`
  } else if ("oneOf" in field) kind = `one of ${choices(field.oneOf)}`
  else if ("enum" in field) kind = `one of ${field.enum.join(", ")}`
  else if (field.type === "boolean") kind = "y/n"
  else if (field.type === "string") kind = field.format ?? "text"
  else kind = field.type === "integer" ? "a whole number" : "a number"
  const def = field.default === undefined
    ? required ? "" : ", optional"
    : `, default ${Array.isArray(field.default) ? field.default.join(",") : String(field.default)}`
  return `${kind}${def}`
}

/** The options of a choice field as `{ const, title }`, whichever way the form lists them. */
const optionsOf = (field: Elicitation.Field): ReadonlyArray<{ readonly const: string; readonly title: string }> => {
  if (field.type === "array") {
    return "anyOf" in field.items ? field.items.anyOf : field.items.enum.map((v) => ({ const: v, title: v }))
  }
  if ("oneOf" in field) return field.oneOf
  if ("enum" in field) return field.enum.map((v, i) => ({ const: v, title: field.enumNames?.[i] ?? v }))
  return []
}

/** One choice typed by its value, its label or its number. */
const pick = (
  options: ReadonlyArray<{ readonly const: string; readonly title: string }>,
  typed: string
): string | undefined => {
  const n = Number(typed)
  if (Number.isInteger(n) && n >= 1 && n <= options.length) return options[n - 1].const
  const lower = typed.toLowerCase()
  return options.find((o) => o.const === typed || o.title.toLowerCase() === lower)?.const
}

/** A typed answer as the field's value, or why it is not one. */
const parseField = (
  field: Elicitation.Field,
  typed: string
): { readonly value: string | number | boolean | ReadonlyArray<string> } | { readonly problem: string } => {
  const options = optionsOf(field)
  if (field.type === "array") {
    const picked = typed.split(",").map((part) => part.trim()).filter((part) => part !== "").map((part) =>
      pick(options, part)
    )
    if (picked.some((p) => p === undefined)) return { problem: "pick from the choices listed" }
    return { value: picked as ReadonlyArray<string> }
  }
  if (options.length > 0) {
    const picked = pick(options, typed)
    return picked === undefined ? { problem: "pick one of the choices listed" } : { value: picked }
  }
  switch (field.type) {
    case "boolean":
      if (/^(y|yes|true)$/i.test(typed)) return { value: true }
      if (/^(n|no|false)$/i.test(typed)) return { value: false }
      return { problem: "answer y or n" }
    case "integer":
    case "number": {
      const n = Number(typed)
      if (typed === "" || !Number.isFinite(n)) return { problem: "type a number" }
      if (field.type === "integer" && !Number.isInteger(n)) return { problem: "type a whole number" }
      return { value: n }
    }
    default:
      return { value: typed }
  }
}

/**
 * Asks a question on the terminal: a form field by field (Enter keeps a default or skips an optional field; a
 * choice is typed by its value, its label or its number), then whether to send it (`n` declines); a page to open,
 * then whether it was done. End of input (Ctrl-D) cancels. With no terminal the answer is `Cancel`: nobody is
 * there to ask, and nobody refused (`unanswered` is told).
 */
export const terminalElicitor = (
  terminal: Terminal = processTerminal(),
  unanswered: (request: Elicitation.Request) => void = () => {}
): Layer.Layer<Elicitation.Elicitor> =>
  Elicitation.layer((request) => {
    const { input, output } = terminal
    if (input.isTTY !== true || output.isTTY !== true) {
      return Effect.sync(() => {
        unanswered(request)
        return Elicitation.cancel
      })
    }
    return Effect.async<Elicitation.Result<Elicitation.Content>>((resume) => {
      const rl = readline.createInterface({ input, output, terminal: false })
      let done = false
      const finish = (result: Elicitation.Result<Elicitation.Content>) => {
        if (done) return
        done = true
        rl.close()
        resume(Effect.succeed(result))
      }
      rl.on("close", () => finish(Elicitation.cancel))
      const ask = (question: string) => new Promise<string>((answer) => rl.question(question, answer))
      const converse = async (): Promise<Elicitation.Result<Elicitation.Content>> => {
        output.write(`${request.message}\n`)
        if (request.mode === "url") {
          output.write(`Open: ${request.url ?? ""}\n`)
          const went = await ask("Done? [y/N] ")
          return /^y(es)?$/i.test(went.trim()) ? Elicitation.accept({}) : Elicitation.decline
        }
        const form = request.requestedSchema ?? { type: "object", properties: {} }
        const required = new Set(form.required ?? [])
        const content: Record<string, string | number | boolean | ReadonlyArray<string>> = {}
        for (const [name, field] of Object.entries(form.properties)) {
          const label = `  ${field.title ?? name}${field.description === undefined ? "" : ` (${field.description})`}`
          for (;;) {
            const typed = (await ask(`${label} [${fieldHint(field, required.has(name))}]: `)).trim()
            if (typed === "") {
              if (field.default !== undefined) content[name] = field.default
              if (field.default !== undefined || !required.has(name)) break
              output.write("    this one is required\n")
              continue
            }
            const parsed = parseField(field, typed)
            if ("value" in parsed) {
              content[name] = parsed.value
              break
            }
            output.write(`    ${parsed.problem}\n`)
          }
        }
        const send = await ask("Send? [Y/n] ")
        return /^n(o)?$/i.test(send.trim()) ? Elicitation.decline : Elicitation.accept(content)
      }
      converse().then(finish, () => finish(Elicitation.cancel))
      return Effect.sync(() => {
        done = true
        rl.close()
      })
    })
  })

/** How a result prints for a person: text parts as they are, other parts as a one-line summary. */
export const printable = (result: ToolResult.ToolResult): string =>
  result.content.map((part) => {
    switch (part.type) {
      case "text":
        return part.text
      case "image":
      case "audio":
        return `[${part.type} ${part.mimeType}, ${Math.floor(part.data.length * 3 / 4)} bytes]`
      case "resource":
        return part.resource.text ?? `[resource ${part.resource.uri}]`
      case "resource_link":
        return `[resource link ${part.uri}]`
    }
  }).join("\n")
