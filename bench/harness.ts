/**
 * The measuring rules every row follows: variants run interleaved (A B A B ..., the order rotated each round so no
 * variant always runs first), after warm-up rounds that are thrown away; a figure is the median of the rounds; a
 * ratio is the median of the per-round ratios, so drift in the machine's load (two cores, shared with other work)
 * hits both sides of each ratio alike.
 */

/** What one row reports: one line of the suite's table per comparison. */
export interface Line {
  /** The row and, for a row with several comparisons, a letter: `1a`, `4b`. */
  readonly id: string
  readonly what: string
  /** Our figure, formatted. */
  readonly figure: string
  /** The baseline's figure, formatted. */
  readonly baseline: string
  /** Ours over the baseline (or the quantity the target bounds, for rows without a measured baseline). */
  readonly ratio: number
  /** The lowest and highest per-round ratio. */
  readonly spread: readonly [number, number]
  readonly target: string
  /** Null for a line that informs and has no target. */
  readonly met: boolean | null
}

/** What a row's process prints as its last line of stdout. */
export interface RowReport {
  readonly lines: ReadonlyArray<Line>
  readonly notes: ReadonlyArray<string>
}

export interface Plan {
  readonly warmup: number
  readonly rounds: number
}

/** The suite runs with `--quick` before a performance-relevant commit: fewer calls, the minimum of rounds. */
export const quick = process.argv.includes("--quick")

export const MIN_ROUNDS = 5

export const plan = (full: Plan, quickPlan: Plan = { warmup: 1, rounds: MIN_ROUNDS }): Plan => {
  const chosen = quick ? quickPlan : full
  return { warmup: chosen.warmup, rounds: Math.max(MIN_ROUNDS, chosen.rounds) }
}

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** One variant: an async step that returns its measured figure (milliseconds unless the row says otherwise). */
export type Variant = () => Promise<number>

/** Runs the variants interleaved; gives each variant's figures, one per kept round, in round order. */
export const interleave = async <const L extends string>(
  variants: Readonly<Record<L, Variant>>,
  options: Plan & { readonly label?: string | undefined }
): Promise<Record<L, Array<number>>> => {
  const labels = Object.keys(variants) as Array<L>
  const figures = Object.fromEntries(labels.map((label) => [label, [] as Array<number>])) as Record<L, Array<number>>
  const total = options.warmup + options.rounds
  for (let round = 0; round < total; round++) {
    for (let k = 0; k < labels.length; k++) {
      const label = labels[(round + k) % labels.length]
      const figure = await variants[label]()
      if (round >= options.warmup) figures[label].push(figure)
    }
    progress(`${options.label ?? "round"} ${round + 1}/${total}${round < options.warmup ? " (warm-up)" : ""}`)
  }
  return figures
}

/** The time an async step takes, in milliseconds. */
export const timed = async (step: () => Promise<unknown>): Promise<number> => {
  const start = performance.now()
  await step()
  return performance.now() - start
}

/** The median of the per-round ratios `a[i] / b[i]`, with the lowest and highest. */
export const ratioOf = (
  a: ReadonlyArray<number>,
  b: ReadonlyArray<number>
): { readonly ratio: number; readonly spread: readonly [number, number] } => {
  const ratios = a.map((x, i) => x / b[i])
  return { ratio: median(ratios), spread: [Math.min(...ratios), Math.max(...ratios)] }
}

/** Progress on stderr, so stdout carries only the report. */
export const progress = (message: string): void => {
  process.stderr.write(`  ${message}\n`)
}

export const micros = (ms: number): string => `${(ms * 1000).toFixed(ms * 1000 >= 100 ? 0 : 1)} µs`

export const millis = (ms: number): string => `${ms.toFixed(ms >= 100 ? 0 : 1)} ms`

export const perSecond = (n: number): string => `${Math.round(n).toLocaleString("en-US")} calls/s`

export const megabytes = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MB`

/** Ends a row's process: the report as the last line of stdout. */
export const report = (lines: ReadonlyArray<Line>, notes: ReadonlyArray<string> = []): void => {
  process.stdout.write(JSON.stringify({ lines, notes } satisfies RowReport) + "\n")
}
