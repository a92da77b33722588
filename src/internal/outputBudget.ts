/**
 * Output budgets: the rule that cuts a result's text to what the model may read, keeping its head and its tail
 * ({@link cut}), and the folder the whole text is spilled to ({@link SpillFolder}). `Middleware.outputBudget` puts
 * them around a call.
 *
 * What counts is text a model reads character by character: text parts and the text of embedded resources. Media
 * (images, audio, blobs) pass whole and do not count: half an image is no image.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import type * as Middleware from "../Middleware.js"
import * as ToolResult from "../ToolResult.js"
import { reasonOf } from "./reason.js"

/** What an estimate of tokens is worth in characters. */
export const CHARS_PER_TOKEN = 4

export const DEFAULT_MAX_CHARS = 30_000

export const DEFAULT_SPILL_MAX_BYTES = 100 * 1024 * 1024

/** How far a cut moves to end (or start) at a line boundary, at most: a quarter of the side it shortens. */
const SNAP = 256

// ---------------------------------------------------------------------------------------------------------------
// the cut
// ---------------------------------------------------------------------------------------------------------------

/** The text a model reads of a part, if it is text. */
export const textOf = (part: ToolResult.Content): string | undefined =>
  part.type === "text" ? part.text : part.type === "resource" ? part.resource.text : undefined

const withText = (part: ToolResult.Content, text: string): ToolResult.Content =>
  part.type === "resource"
    ? { ...part, resource: { ...part.resource, text } }
    : part.type === "text"
    ? { ...part, text }
    : part

/** Characters of text in the content, as a model reads them. */
export const textLength = (content: ReadonlyArray<ToolResult.Content>): number => {
  let total = 0
  for (const part of content) total += textOf(part)?.length ?? 0
  return total
}

/**
 * A copy of a short string that shares no storage with the string it was sliced from: V8 keeps a slice's parent
 * alive, and the parent is the whole output a budget is there to let go of.
 */
const detached = (text: string): string => Buffer.from(text, "utf16le").toString("utf16le")

const isHigh = (code: number): boolean => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/** The text parts in order, each with where it starts in their concatenation. */
interface Texts {
  readonly texts: ReadonlyArray<string>
  readonly starts: ReadonlyArray<number>
}

const textsOf = (content: ReadonlyArray<ToolResult.Content>): Texts => {
  const texts: Array<string> = []
  const starts: Array<number> = []
  let at = 0
  for (const part of content) {
    const text = textOf(part)
    if (text === undefined || text.length === 0) continue
    texts.push(text)
    starts.push(at)
    at += text.length
  }
  return { texts, starts }
}

/** The text holding position `at` of the concatenation (`at` < its length). */
const locate = ({ starts, texts }: Texts, at: number): number => {
  let i = 0
  while (i + 1 < texts.length && starts[i + 1] <= at) i++
  return i
}

/** The head's end `at`, moved back to the last line break shortly before it, and off a surrogate pair's middle. */
const headEnd = (texts: Texts, at: number, window: number): number => {
  if (at <= 0) return 0
  const i = locate(texts, at)
  const text = texts.texts[i]
  const offset = at - texts.starts[i]
  if (offset === 0) return at
  const lineEnd = text.lastIndexOf("\n", offset - 1)
  if (lineEnd >= 0 && offset - lineEnd <= window) return texts.starts[i] + lineEnd
  return isHigh(text.charCodeAt(offset - 1)) && isLow(text.charCodeAt(offset)) ? at - 1 : at
}

/** The tail's start `at`, moved on to just after the first line break shortly after it, and off a pair's middle. */
const tailStart = (texts: Texts, at: number, total: number, window: number): number => {
  if (at >= total) return total
  const i = locate(texts, at)
  const text = texts.texts[i]
  const offset = at - texts.starts[i]
  if (offset === 0) return at
  const lineBreak = text.indexOf("\n", offset)
  if (lineBreak >= 0 && lineBreak - offset < window) return texts.starts[i] + lineBreak + 1
  return isLow(text.charCodeAt(offset)) && isHigh(text.charCodeAt(offset - 1)) ? at + 1 : at
}

/**
 * The content cut to at most `maxChars` characters of text, the marker included (when `maxChars` leaves room for
 * the marker; a smaller budget gives the marker alone): the first half of what may be kept and the last half,
 * each ending (or starting) at a line boundary when one is near, never inside a surrogate pair, and the marker
 * between them, in the text part where the head ends. Parts wholly inside the cut are dropped; media parts are
 * kept where they were. Undefined when the text is within the budget.
 */
export const cut = (
  content: ReadonlyArray<ToolResult.Content>,
  maxChars: number,
  marker: (cut: number) => string
): { readonly content: ReadonlyArray<ToolResult.Content>; readonly cut: number } | undefined => {
  const texts = textsOf(content)
  const last = texts.texts.length - 1
  const total = last < 0 ? 0 : texts.starts[last] + texts.texts[last].length
  if (total <= maxChars) return undefined
  // the marker with the most digits it can have: the one it gets is no longer
  const keep = Math.max(0, maxChars - marker(total).length)
  const headKeep = Math.ceil(keep / 2)
  const tailKeep = keep - headKeep
  const head = headEnd(texts, headKeep, Math.min(SNAP, Math.floor(headKeep / 4)))
  const tail = Math.max(head, tailStart(texts, total - tailKeep, total, Math.min(SNAP, Math.floor(tailKeep / 4))))
  const removed = tail - head
  const out: Array<ToolResult.Content> = []
  let at = 0
  let marked = false
  for (const part of content) {
    const text = textOf(part)
    if (text === undefined || text.length === 0) {
      out.push(part)
      continue
    }
    const start = at
    const end = at + text.length
    at = end
    const kept = Math.min(Math.max(head - start, 0), text.length)
    const tailFrom = Math.min(Math.max(tail - start, 0), text.length)
    let shown = kept > 0 ? text.slice(0, kept) : ""
    if (!marked && head >= start && head < end) {
      shown += marker(removed)
      marked = true
    }
    if (tailFrom < text.length) shown += tailFrom === 0 ? text : text.slice(tailFrom)
    if (shown === text) out.push(part)
    else if (shown !== "") out.push(withText(part, detached(shown)))
  }
  return { content: out, cut: removed }
}

/** The line between the head and the tail: how much was cut, and where the whole output is. */
export const markerText = (where: Spilled): (cut: number) => string => {
  switch (where._tag) {
    case "Kept":
      return (cut) => `\n… [${cut} characters cut; the whole output is at ${where.location}] …\n`
    case "Off":
      return (cut) => `\n… [${cut} characters cut] …\n`
    case "Lost":
      return (cut) => `\n… [${cut} characters cut; the whole output could not be kept] …\n`
  }
}

// ---------------------------------------------------------------------------------------------------------------
// spilling
// ---------------------------------------------------------------------------------------------------------------

/** Where the whole output went: a location, nowhere by choice, or nowhere because keeping it failed (and why). */
export type Spilled =
  | { readonly _tag: "Kept"; readonly location: string }
  | { readonly _tag: "Off" }
  | { readonly _tag: "Lost"; readonly reason: string }

export const spillOff: Spilled = { _tag: "Off" }

/** Keeps the whole text of a result somewhere; never fails (a failure is `Lost`, with its reason). */
export type Spill = (call: Middleware.Call, texts: ReadonlyArray<string>) => Effect.Effect<Spilled>

/** A host's sink as a {@link Spill}: it gets the text parts joined by `\n`, as `ToolResult.toText` joins them. */
export const sinkSpill = (
  sink: (call: Middleware.Call, text: string) => Effect.Effect<string, unknown>
): Spill =>
(call, texts) =>
  Effect.suspend(() => sink(call, texts.length === 1 ? texts[0] : texts.join("\n"))).pipe(
    Effect.map((location): Spilled => ({ _tag: "Kept", location })),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : Effect.succeed<Spilled>({ _tag: "Lost", reason: reasonOf(Cause.squash(cause)) })
    )
  )

interface SpillFile {
  readonly path: string
  readonly bytes: number
}

/** A call id as a file name: what the model wrote, so only letters, digits, `_` and `-`, and not too long. */
const fileName = (seq: number, callId: string): string =>
  `${seq}-${callId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "call"}.txt`

const sizeOf = (texts: ReadonlyArray<string>): number => {
  let bytes = Math.max(0, texts.length - 1)
  for (const text of texts) bytes += Buffer.byteLength(text, "utf8")
  return bytes
}

/**
 * A folder of spilled outputs: `<parent>/<pid>-<random>/<n>-<call id>.txt`, made the first time it spills
 * (`mkdtemp`: new, mode 0700, so nobody else can read the outputs or plant a file where one goes; each file 0600),
 * holding at most `maxBytes` of them: the oldest files go first to make room, and an output larger than the whole
 * bound is not kept. It counts only the files it wrote, and leaves them when the process is done (the host's, or
 * the OS's temporary-file cleaning): the model may be told to read one after its call.
 *
 * Its state is the files it keeps, oldest first, and their total; a write reserves its room before it starts, so
 * calls spilling at once never go over the bound together.
 */
export class SpillFolder {
  private readonly parent: string | undefined
  private readonly maxBytes: number
  private folder: string | undefined = undefined
  private readonly opening = Effect.unsafeMakeSemaphore(1)
  private readonly files: Array<SpillFile> = []
  private total = 0
  private seq = 0

  /** `parent`: the host's folder; by default `os.tmpdir()/agent-tools-spill`. */
  constructor(options: { readonly parent?: string | undefined; readonly maxBytes: number }) {
    this.parent = options.parent
    this.maxBytes = options.maxBytes
  }

  readonly spill: Spill = (call, texts) =>
    Effect.suspend(() => {
      const bytes = sizeOf(texts)
      if (bytes > this.maxBytes) {
        return Effect.succeed<Spilled>({
          _tag: "Lost",
          reason: `the output is ${bytes} bytes, more than the spill folder keeps (${this.maxBytes})`
        })
      }
      return Effect.flatMap(this.open, (folder) => {
        const file = { path: nodePath.join(folder, fileName(++this.seq, call.id)), bytes }
        const evicted = this.reserve(file)
        return Effect.forEach(evicted, (old) => remove(old.path), { discard: true }).pipe(
          Effect.zipRight(write(file.path, texts)),
          Effect.tapError(() => this.release(file)),
          Effect.as<Spilled>({ _tag: "Kept", location: file.path })
        )
      }).pipe(Effect.catchAll((reason) => Effect.succeed<Spilled>({ _tag: "Lost", reason })))
    })

  /** Takes room for `file`, giving up the oldest files until it fits; gives the files given up. */
  private reserve(file: SpillFile): ReadonlyArray<SpillFile> {
    let drop = 0
    let total = this.total
    while (total + file.bytes > this.maxBytes && drop < this.files.length) total -= this.files[drop++].bytes
    const evicted = this.files.splice(0, drop)
    this.files.push(file)
    this.total = total + file.bytes
    return evicted
  }

  private release(file: SpillFile): Effect.Effect<void> {
    return Effect.sync(() => {
      const at = this.files.indexOf(file)
      if (at < 0) return
      this.files.splice(at, 1)
      this.total -= file.bytes
    })
  }

  /** The folder, made the first time (one fiber at a time; a failure is tried again next time). */
  private readonly open: Effect.Effect<string, string> = this.opening.withPermits(1)(
    Effect.suspend(() => {
      if (this.folder !== undefined) return Effect.succeed(this.folder)
      return Effect.tap(
        Effect.tryPromise({
          try: () => makeFolder(this.parent),
          catch: (error) => `making the spill folder failed: ${reasonOf(error)}`
        }),
        (folder) => {
          this.folder = folder
        }
      )
    })
  )
}

/**
 * A new folder in `parent`. The default parent is shared by every user of the machine and may have been made by
 * someone else: it is used only when it is a folder of ours, not a link to one elsewhere.
 */
const makeFolder = async (given: string | undefined): Promise<string> => {
  const parent = given ?? nodePath.join(os.tmpdir(), "agent-tools-spill")
  await fs.promises.mkdir(parent, { recursive: true, mode: 0o700 })
  if (given === undefined) {
    const stat = await fs.promises.lstat(parent)
    if (!stat.isDirectory()) throw new Error(`${parent} is not a folder`)
    const uid = process.getuid?.()
    if (uid !== undefined && stat.uid !== uid) throw new Error(`${parent} belongs to another user`)
  }
  return fs.promises.mkdtemp(nodePath.join(parent, `${process.pid}-`))
}

/** The texts into a new file (never over an existing one), `\n` between them; a file left half written is removed. */
const write = (path: string, texts: ReadonlyArray<string>): Effect.Effect<void, string> =>
  Effect.tryPromise({
    try: async () => {
      const handle = await fs.promises.open(path, "wx", 0o600)
      try {
        for (let i = 0; i < texts.length; i++) {
          // `writeFile` writes all of it from where the handle is (`write` may write part)
          if (i > 0) await handle.writeFile("\n")
          await handle.writeFile(texts[i])
        }
      } catch (error) {
        await fs.promises.rm(path, { force: true }).catch(() => undefined)
        throw error
      } finally {
        await handle.close()
      }
    },
    catch: (error) => `writing ${path} failed: ${reasonOf(error)}`
  })

const remove = (path: string): Effect.Effect<void> =>
  Effect.promise(() => fs.promises.rm(path, { force: true }).catch(() => undefined))

// ---------------------------------------------------------------------------------------------------------------
// a budget on one outcome
// ---------------------------------------------------------------------------------------------------------------

/**
 * A result cut to `maxChars` characters of text, its whole text spilled first; the result as it is when it fits.
 * A result a budget cut already (an inner budget) is cut again from what it shows, keeping the whole content and
 * the location of the first cut, so the smaller budget holds and the whole output is spilled once.
 */
export const applyBudget = (
  call: Middleware.Call,
  result: ToolResult.ToolResult,
  maxChars: number,
  spill: Spill | undefined
): Effect.Effect<ToolResult.ToolResult> => {
  if (textLength(result.content) <= maxChars) return Effect.succeed(result)
  const earlier = result.truncation
  const whole = earlier?.content ?? result.content
  const spilled: Effect.Effect<Spilled> = earlier?.location !== undefined
    ? Effect.succeed({ _tag: "Kept", location: earlier.location })
    : spill === undefined
    ? Effect.succeed(spillOff)
    : Effect.tap(spill(call, textsOf(whole).texts), (where) =>
      where._tag === "Lost"
        ? Effect.logWarning(`the whole output of call ${call.id} (${call.name}) could not be kept: ${where.reason}`)
        : Effect.void)
  return Effect.map(spilled, (where) => {
    const shown = cut(result.content, maxChars, markerText(where))!
    return ToolResult.make({
      content: shown.content,
      structured: result.structured,
      details: result.details,
      terminate: result.terminate,
      truncation: {
        content: whole,
        // cut twice: what the first cut took and what this one took of what was left
        cut: (earlier?.cut ?? 0) + shown.cut,
        location: where._tag === "Kept" ? where.location : undefined
      }
    })
  })
}

/** {@link applyBudget} on an outcome: errors are the tool's own words and pass as they are. */
export const budgetOutcome = <O extends Either.Either<ToolResult.ToolResult, unknown>>(
  call: Middleware.Call,
  outcome: O,
  maxChars: number,
  spill: Spill | undefined
): Effect.Effect<O> =>
  Either.isLeft(outcome)
    ? Effect.succeed(outcome)
    : Effect.map(applyBudget(call, outcome.right, maxChars, spill), (result) =>
      result === outcome.right ? outcome : Either.right(result) as unknown as O)
