// `npm run pack:check`: the package as a user gets it. Packs the tarball, then, in empty folders (it needs the npm
// registry):
//
// 1. checks the tarball: README, LICENSE, CHANGELOG and docs/ are in it, every relative link of README.md and
//    docs/*.md points at a file in it, and dist/ holds no module of the CLI besides its bundle;
// 2. installs it with the peers we support (`npm i <tarball> effect@3 @effect/platform@0.97`) and measures what
//    that adds (packages, MB); checks that no CLI dependency came with it, that the library imports and runs the
//    README's example, that `agent-tools` runs, and that a stdio provider without the optional
//    @effect/platform-node says what to install;
// 3. installs it next to Effect 4 (`npm i <tarball> effect@latest`) and checks that npm refuses (ERESOLVE) instead
//    of nesting a second Effect.
//
// The figures go to the README's Install section by hand; this prints them.
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { root } from "./bundle.mjs"

const say = (line) => process.stdout.write(`${line}\n`)
const problems = []
const check = (ok, problem) => {
  if (!ok) problems.push(problem)
}

const npm = (args, cwd) =>
  spawnSync("npm", [...args, "--no-audit", "--no-fund", "--no-update-notifier"], { cwd, encoding: "utf8" })

const sizeOf = (dir) => {
  let bytes = 0
  const walk = (folder) => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isFile()) bytes += fs.statSync(full).size
    }
  }
  walk(dir)
  return bytes
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "pack-check-"))
try {
  // 1. the tarball
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], {
      cwd: root,
      encoding: "utf8"
    })
  )
  const tarball = path.join(work, packed.filename)
  const files = new Set(packed.files.map((f) => f.path))
  say(`tarball: ${packed.filename}, ${files.size} files, ${(packed.size / 1e6).toFixed(2)} MB packed`)
  for (
    const file of [
      "README.md",
      "LICENSE",
      "CHANGELOG.md",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/cli/main.js",
      "dist/cli/agent-tools.cjs"
    ]
  ) {
    check(files.has(file), `the tarball has no ${file}`)
  }
  for (const page of [...files].filter((f) => f === "README.md" || /^docs\/[^/]+\.md$/.test(f))) {
    const text = fs.readFileSync(path.join(root, page), "utf8")
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target)) continue
      const file = path.posix.normalize(path.posix.join(path.posix.dirname(page), target))
      check(files.has(file), `${page} links to ${target}, which the tarball does not have`)
    }
  }
  const cliModules = [...files].filter((f) =>
    f.startsWith("dist/cli/") && f !== "dist/cli/main.js" && f !== "dist/cli/agent-tools.cjs"
  )
  check(cliModules.length === 0, `dist/cli/ holds more than the bundle and its launcher: ${cliModules.join(", ")}`)

  // 2. installed with the peers we support
  const app = path.join(work, "app")
  fs.mkdirSync(app)
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
  const installed = npm(["install", tarball, "effect@3", "@effect/platform@0.97"], app)
  check(installed.status === 0, `npm install failed:\n${installed.stderr}`)
  const added = /added (\d+) packages?/.exec(installed.stdout)?.[1]
  const megabytes = (sizeOf(path.join(app, "node_modules")) / 1e6).toFixed(1)
  const onDisk = spawnSync("du", ["-sm", "node_modules"], { cwd: app, encoding: "utf8" }).stdout.split("\t")[0]
  say(
    `npm i <tarball> effect@3 @effect/platform@0.97: added ${added} packages, ` +
      `node_modules ${megabytes} MB of files, ${onDisk} MB on disk (du -sm)`
  )
  for (const name of ["@effect/cli", "@effect/printer", "@effect/printer-ansi", "@effect/platform-node"]) {
    check(!fs.existsSync(path.join(app, "node_modules", name)), `${name} was installed`)
  }
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
  const example = /<!-- example: quick-start -->\n```ts\n([\s\S]*?)```/.exec(readme)[1]
  fs.writeFileSync(path.join(app, "quick-start.js"), example)
  const ran = spawnSync(process.execPath, ["quick-start.js"], { cwd: app, encoding: "utf8" })
  check(
    ran.status === 0 && ran.stdout.includes("It is 21 degrees celsius in Paris."),
    `the README's example failed:\n${ran.stdout}${ran.stderr}`
  )
  const bin = spawnSync(path.join(app, "node_modules/.bin/agent-tools"), ["list", "--format", "anthropic"], {
    cwd: app,
    encoding: "utf8"
  })
  check(bin.status === 0 && JSON.parse(bin.stdout)[0]?.name === "read_file", `agent-tools list failed:\n${bin.stderr}`)
  fs.writeFileSync(
    path.join(app, "provider.js"),
    "import { StdioProvider, Toolkit, Tool } from \"effect-agent-tools\"\n" +
      "import { Effect } from \"effect\"\n" +
      "StdioProvider.main(Toolkit.make(Tool.make(\"noop\", { description: \"nothing\", handler: () => Effect.void })))\n"
  )
  const provider = spawnSync(process.execPath, ["provider.js"], { cwd: app, encoding: "utf8", input: "" })
  check(
    provider.status === 1 && provider.stderr.includes("npm install @effect/platform-node"),
    `a provider without @effect/platform-node did not say what to install (exit ${provider.status}):\n${provider.stderr}`
  )
  say(`a provider without @effect/platform-node: exit ${provider.status}, ${provider.stderr.trim()}`)

  // 3. next to Effect 4
  const four = path.join(work, "four")
  fs.mkdirSync(four)
  fs.writeFileSync(path.join(four, "package.json"), JSON.stringify({ name: "four", private: true, type: "module" }))
  const refused = npm(["install", tarball, "effect@latest"], four)
  check(refused.status !== 0 && refused.stderr.includes("ERESOLVE"), "npm installed the package next to Effect 4")
  check(!fs.existsSync(path.join(four, "node_modules")), "npm left a node_modules next to Effect 4")
  say(`npm i <tarball> effect@latest: exit ${refused.status}\n${refused.stderr.split("\n").slice(0, 14).join("\n")}`)
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}

for (const problem of problems) say(`✗ ${problem}`)
say(problems.length === 0 ? "pack:check: the package installs and runs as the README says" : "pack:check: FAILED")
if (problems.length > 0) process.exitCode = 1
