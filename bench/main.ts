/**
 * `npm run bench [-- --quick] [-- --only 1,4]`: compiles the project (see `build.ts`), runs each row in a process
 * of its own, one after another, and prints one markdown table with the machine it ran on. `--quick` runs fewer
 * calls per round (still at least 5 rounds after warm-up) and takes under a minute; `--strict` exits 1 when a
 * target is missed. Progress goes to stderr, the table to stdout.
 */
import { spawn } from "node:child_process"
import * as os from "node:os"
import { bundleCli } from "../scripts/bundle.mjs"
import { compile, compiled, root } from "./build.js"
import type { Line, RowReport } from "./harness.js"

interface Row {
  /** The rows of the table this process measures. */
  readonly rows: ReadonlyArray<number>
  readonly file: string
  readonly nodeFlags?: ReadonlyArray<string>
}

const ROWS: ReadonlyArray<Row> = [
  { rows: [1, 2], file: "bench/executor.ts" },
  { rows: [3], file: "bench/resources.ts" },
  { rows: [4], file: "bench/mcp-server.ts" },
  { rows: [5], file: "bench/mcp-client.ts" },
  { rows: [6], file: "bench/memory.ts", nodeFlags: ["--expose-gc"] },
  { rows: [7], file: "bench/stdio-provider.ts" },
  { rows: [8], file: "bench/journal.ts" },
  { rows: [9], file: "bench/agent.ts" },
  { rows: [10], file: "bench/mcp-http.ts" },
  { rows: [12], file: "bench/mcp-client-http.ts" },
  { rows: [13], file: "bench/fiber.ts" },
  { rows: [14], file: "bench/definitions.ts" },
  { rows: [15], file: "bench/big-result.ts" }
]

const args = process.argv.slice(2)
const quick = args.includes("--quick")
const strict = args.includes("--strict")
const onlyAt = args.indexOf("--only")
const only = onlyAt >= 0 ? new Set(args[onlyAt + 1]?.split(",").map(Number)) : undefined

const runRow = (row: Row): Promise<RowReport> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...(row.nodeFlags ?? []), compiled(row.file), ...(quick ? ["--quick"] : [])],
      { cwd: root, stdio: ["ignore", "pipe", "inherit"] }
    )
    let out = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      out += chunk
    })
    child.on("error", reject)
    child.on("close", (code) => {
      const last = out.trim().split("\n").pop() ?? ""
      if (code !== 0) return reject(new Error(`${row.file} exited with code ${code}`))
      try {
        resolve(JSON.parse(last) as RowReport)
      } catch {
        reject(new Error(`${row.file} printed no report: ${JSON.stringify(out.slice(-500))}`))
      }
    })
  })

const ratio = (line: Line): string =>
  `${line.ratio.toFixed(2)}x (${line.spread[0].toFixed(2)}-${line.spread[1].toFixed(2)})`

const cell = (text: string): string => text.replace(/\|/g, "\\|")

const table = (lines: ReadonlyArray<Line>): string =>
  [
    "| # | what | ours | baseline, same run | ratio (range) | target | met |",
    "|---|---|---|---|---|---|---|",
    ...lines.map((line) =>
      `| ${line.id} | ${cell(line.what)} | ${cell(line.figure)} | ${cell(line.baseline)} | ${ratio(line)} | ${
        cell(line.target)
      } | ${line.met === null ? "-" : line.met ? "yes" : "**no**"} |`
    )
  ].join("\n")

const machine = (): string => {
  const cpus = os.cpus()
  const load = os.loadavg().map((l) => l.toFixed(2)).join(" ")
  return `Node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} x ${
    cpus[0]?.model.trim() ?? "unknown CPU"
  }, ${Math.round(os.totalmem() / 2 ** 30)} GiB; load average at start ${load}; ${new Date().toISOString()}`
}

const main = async () => {
  const startedAt = performance.now()
  const header = machine()
  process.stderr.write(`compiling src/ and bench/\n`)
  await compile()
  // row 4 starts the package's binary as a user does
  bundleCli()
  const lines: Array<Line> = []
  const notes: Array<string> = []
  for (const row of ROWS) {
    if (only !== undefined && !row.rows.some((r) => only.has(r))) continue
    process.stderr.write(`row ${row.rows.join(", ")}: ${row.file}${quick ? " --quick" : ""}\n`)
    const rowStarted = performance.now()
    const result = await runRow(row)
    process.stderr.write(`row ${row.rows.join(", ")}: ${((performance.now() - rowStarted) / 1000).toFixed(1)} s\n`)
    lines.push(...result.lines)
    notes.push(...result.notes)
  }
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(0)
  process.stdout.write(
    [
      `${quick ? "Quick run" : "Full run"} (${seconds} s): ${header}`,
      "",
      table(lines),
      ...(notes.length === 0 ? [] : ["", ...notes.map((note) => `- ${note}`)]),
      ""
    ].join("\n")
  )
  if (strict && lines.some((line) => line.met === false)) process.exitCode = 1
}

await main()
