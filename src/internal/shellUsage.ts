/**
 * The usage text of a toolkit run as a shell program: for a person (`help`) and for a model (`usage --markdown`,
 * one section per tool: what it does, the hints its author gave, a synopsis, and each flag with its type, whether
 * it is required, its allowed values, its default and its bounds). Both are made from one description of each tool,
 * so they never disagree.
 *
 * @internal
 */
import type * as Tool from "../Tool.js"
import type * as Toolkit from "../Toolkit.js"
import type { Flag, FlagKind } from "./shellFlags.js"
import { flagsOf } from "./shellFlags.js"

/** The exit codes, named once: what `run` gives and what the usage text explains. */
export const EXIT = { ok: 0, toolError: 1, usage: 2, unanswered: 3 } as const

const valueText = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v))

/** How a flag's value is shown: `<string>`, `<a|b>`, `<json>`. */
const placeholder = (kind: FlagKind): string => {
  switch (kind._tag) {
    case "enum":
      return `<${kind.values.map(valueText).join("|")}>`
    case "array":
      return placeholder(kind.item)
    default:
      return `<${kind._tag}>`
  }
}

/** How a flag is written: `--path <string>`, `--raw` / `--no-raw`, `--tag <string>...`. */
const spelling = (flag: Flag): string => {
  if (flag.kind._tag === "boolean") return `--${flag.name}`
  const value = `--${flag.name} ${placeholder(flag.kind)}`
  return flag.kind._tag === "array" ? `${value}...` : value
}

/** The hints a tool's author stated (unstated ones are left out: unstated is not false). */
export const hintsOf = (tool: Tool.Any): ReadonlyArray<string> => {
  const a = tool.annotations
  const hints: Array<string> = []
  if (a.readOnly === true) hints.push("read-only")
  if (a.readOnly === false) hints.push("changes things")
  if (a.destructive === true) hints.push("destructive")
  if (a.destructive === false && a.readOnly !== true) hints.push("not destructive")
  if (a.idempotent === true) hints.push("idempotent")
  if (a.openWorld === true) hints.push("reaches outside (open world)")
  if (tool.permissionAction !== undefined) hints.push(`asks permission first (${tool.permissionAction})`)
  return hints
}

interface FlagLine {
  readonly spelling: string
  readonly details: string
}

const flagLine = (flag: Flag): FlagLine => {
  const parts: Array<string> = []
  if (flag.required) parts.push("required")
  if (flag.requiredWith !== undefined) parts.push(`required with --${flag.requiredWith}`)
  if (flag.kind._tag === "boolean") parts.push(`true with --${flag.name}, false with --no-${flag.name}`)
  if (flag.kind._tag === "array") parts.push("repeat it for each item")
  if (flag.kind._tag === "json") parts.push(flag.hasFields ? "JSON for the whole object, or a flag per field" : "JSON")
  if (flag.kind._tag === "enum" && flag.kind.values.length > 0) {
    parts.push(`one of ${flag.kind.values.map(valueText).join(", ")}`)
  }
  if (flag.default !== undefined) parts.push(`default ${valueText(flag.default)}`)
  parts.push(...flag.constraints)
  const description = flag.description === undefined ? "" : flag.description.replace(/\s+/g, " ").trim()
  return {
    spelling: spelling(flag),
    details: [parts.join("; "), description].filter((p) => p !== "").join(". ")
  }
}

/** One tool, described. */
interface ToolUsage {
  readonly name: string
  readonly title: string | undefined
  readonly description: string
  readonly hints: ReadonlyArray<string>
  readonly synopsis: string
  readonly flags: ReadonlyArray<FlagLine>
}

const describeTool = (program: string, tool: Tool.Any): ToolUsage => {
  const flags = flagsOf(tool.inputSchema)
  const words = flags.filter((f) => f.path.length === 1).map((f) => f.required ? spelling(f) : `[${spelling(f)}]`)
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description.trim(),
    hints: hintsOf(tool),
    synopsis: [program, tool.name, ...words, "[<json> | -]"].join(" "),
    flags: flags.map(flagLine)
  }
}

/** The rules every tool shares, said once at the top. */
const rules = (program: string): ReadonlyArray<string> => [
  `Run a tool: \`${program} <tool> [--<param> <value> ...] [<json> | -]\`.`,
  "Flags set the tool's parameters: `--name value` or `--name=value`; a boolean is `--name` (true) or " +
  "`--no-name` (false); a list repeats its flag (`--tag a --tag b`); a field of an object is `--object.field value`; " +
  "a parameter of any other shape takes JSON (`--name '{\"a\":1}'`).",
  "A JSON object as the last argument, or `-` to read one from standard input, gives parameters too; a parameter " +
  "given both ways is an error. `--` ends the flags.",
  `Exit codes: ${EXIT.ok} done (the result on standard output); ${EXIT.toolError} the tool failed (an \`Error:\` ` +
  `line on standard error); ${EXIT.usage} the command line is wrong; ${EXIT.unanswered} the tool asked a question ` +
  "(permission, or more input) and nobody was there to answer it.",
  `Before the tool's name, \`--yes\` allows whatever asks for permission. \`${program} help <tool>\` shows one ` +
  `tool; \`${program} schema <tool>\` prints its JSON Schema.`
]

/** A description's first sentence: up to a period that ends the line or comes before a capital letter. */
const firstSentence = (text: string): string => {
  const line = text.split("\n")[0]
  const end = line.search(/\.(\s+[A-Z]|$)/)
  return end < 0 ? line : line.slice(0, end + 1)
}

/** The whole usage, as Markdown: what a model reads before it runs the program. */
export const markdown = (program: string, description: string | undefined, toolkit: Toolkit.Toolkit): string => {
  const out: Array<string> = [`# ${program}`, ""]
  if (description !== undefined) out.push(description, "")
  for (const rule of rules(program)) out.push(rule, "")
  for (const tool of toolkit.tools.map((t) => describeTool(program, t))) {
    out.push(`## ${tool.name}`, "")
    if (tool.title !== undefined) out.push(`**${tool.title}**`, "")
    out.push(tool.description, "")
    if (tool.hints.length > 0) out.push(`Hints: ${tool.hints.join(", ")}.`, "")
    out.push("```sh", tool.synopsis, "```", "")
    if (tool.flags.length === 0) out.push("No flags.", "")
    for (const flag of tool.flags) out.push(`- \`${flag.spelling}\`${flag.details === "" ? "" : `: ${flag.details}`}`)
    if (tool.flags.length > 0) out.push("")
  }
  return out.join("\n").replace(/\n+$/, "\n")
}

/** One tool's usage, as plain text (`help <tool>`, `<tool> --help`). */
export const toolText = (program: string, tool: Tool.Any): string => {
  const usage = describeTool(program, tool)
  const out: Array<string> = [`${usage.name}${usage.title === undefined ? "" : ` (${usage.title})`}`, ""]
  out.push(...usage.description.split("\n").map((line) => `  ${line}`), "")
  if (usage.hints.length > 0) out.push(`  Hints: ${usage.hints.join(", ")}.`, "")
  out.push(`  ${usage.synopsis}`, "")
  for (const flag of usage.flags) {
    out.push(`  ${flag.spelling}`)
    if (flag.details !== "") out.push(`      ${flag.details}`)
  }
  return out.join("\n").replace(/\n+$/, "\n")
}

/** The list of tools and the rules, as plain text (`help`). */
export const overviewText = (program: string, description: string | undefined, toolkit: Toolkit.Toolkit): string => {
  const out: Array<string> = []
  if (description !== undefined) out.push(`${program}: ${description}`, "")
  out.push(
    `Usage: ${program} <tool> [--<param> <value> ...] [<json> | -]`,
    `       ${program} help [<tool>] | schema <tool> | usage [--markdown]`,
    "",
    "Tools:"
  )
  const width = Math.max(...toolkit.tools.map((t) => t.name.length))
  for (const tool of toolkit.tools) out.push(`  ${tool.name.padEnd(width)}  ${firstSentence(tool.description)}`)
  out.push("", ...rules(program).map((rule) => rule.replace(/`/g, "")))
  return `${out.join("\n")}\n`
}

/** The whole usage as plain text (`usage`): the overview, then every tool. */
export const fullText = (program: string, description: string | undefined, toolkit: Toolkit.Toolkit): string =>
  [overviewText(program, description, toolkit), ...toolkit.tools.map((tool) => toolText(program, tool))].join("\n")
