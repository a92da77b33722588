// Makes sure better-sqlite3's native addon loads in this checkout, building it from source when it does not.
//
// Why: the SQLite journal, its tests and its bench row need the addon. better-sqlite3's own install script
// downloads a prebuilt binary and falls back to node-gyp, but it does not always run: npm 11 runs a dependency's
// install script only while `allowScripts` (package.json) or the user's npm config allows it (a denial, a
// `strict-allow-scripts` config or a future npm that blocks unreviewed scripts skips it), and the download is
// blocked on machines without internet access. This runs as the project's `preprepare` script, after the
// dependencies are installed, on `npm install` and `npm ci` in a clone (never when the package is installed as a
// dependency: npm runs `prepare` scripts only for the root project and for git dependencies).
//
// Quiet when the addon loads (the usual case: about 50 ms); otherwise builds it with the node-gyp that comes with
// npm (Node's headers, python3, make and a C++ compiler must be on the machine), prints one line, and fails the
// install loudly, with the build's output, when the build fails.
import { spawnSync } from "node:child_process"
import { createRequire } from "node:module"
import * as path from "node:path"

const require = createRequire(path.join(process.cwd(), "package.json"))

let packageDir
try {
  packageDir = path.dirname(require.resolve("better-sqlite3/package.json"))
} catch {
  process.exit(0) // not installed (`npm ci --omit=dev`): nothing needs it here
}

/** Opens an in-memory database in a fresh process: loading the addon is what fails when it was not built. */
const loads = () =>
  spawnSync(process.execPath, ["-e", "new (require('better-sqlite3'))(':memory:').close()"], {
    cwd: process.cwd(),
    encoding: "utf8"
  })

const first = loads()
if (first.status === 0) process.exit(0)

const nodeGyp = process.env.npm_config_node_gyp ??
  (process.env.npm_execpath === undefined
    ? undefined
    : path.join(path.dirname(process.env.npm_execpath), "..", "node_modules", "node-gyp", "bin", "node-gyp.js"))

const fail = (what, output) => {
  process.stderr.write(
    `build-native: ${what}\n${output.trim().split("\n").slice(-40).join("\n")}\n` +
      "build-native: better-sqlite3 needs Node's headers, python3, make and a C++ compiler to build from source\n"
  )
  process.exit(1)
}

if (nodeGyp === undefined) {
  fail("better-sqlite3's addon does not load, and node-gyp was not found (run this through npm)", first.stderr)
}

process.stderr.write(`build-native: better-sqlite3's addon does not load; building it from source in ${packageDir}\n`)
const build = spawnSync(process.execPath, [nodeGyp, "rebuild", "--release", "--jobs=max"], {
  cwd: packageDir,
  encoding: "utf8",
  env: { ...process.env, npm_config_build_from_source: "true" },
  maxBuffer: 64 * 1024 * 1024
})
if (build.status !== 0) fail(`node-gyp exited with ${build.status ?? build.signal}`, build.stdout + build.stderr)

const after = loads()
if (after.status !== 0) fail("better-sqlite3 was built but still does not load", after.stderr)
