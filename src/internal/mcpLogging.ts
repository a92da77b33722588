/**
 * Effect's log levels and MCP's, both ways, for the server (an `Effect.log*` in a handler becomes
 * `notifications/message`) and the client (a server's `notifications/message` becomes an Effect log).
 *
 * | Effect | MCP, out | MCP, in | Effect |
 * |---|---|---|---|
 * | Trace, Debug | debug | debug | Debug |
 * | Info | info | info, notice | Info |
 * | Warning | warning | warning | Warning |
 * | Error | error | error | Error |
 * | Fatal | critical | critical, alert, emergency | Fatal |
 *
 * A level a client sets with `logging/setLevel` is a threshold on MCP's scale: `notice` lets through warnings and
 * above, since no Effect level maps to `notice`.
 *
 * @internal
 */
import type { LoggingLevel } from "@modelcontextprotocol/server"
import * as LogLevel from "effect/LogLevel"

export type McpLevel = LoggingLevel

/** MCP's levels, least severe first. */
export const MCP_LEVELS: ReadonlyArray<McpLevel> = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency"
]

export const severity = (level: McpLevel): number => MCP_LEVELS.indexOf(level)

/** An Effect level as MCP's (`None` and `All` are thresholds, never a message's level: they read as the nearest). */
export const toMcp = (level: LogLevel.LogLevel): McpLevel => {
  switch (level._tag) {
    case "All":
    case "Trace":
    case "Debug":
      return "debug"
    case "Info":
      return "info"
    case "Warning":
      return "warning"
    case "Error":
      return "error"
    case "Fatal":
    case "None":
      return "critical"
  }
}

/** An MCP level as Effect's. */
export const fromMcp = (level: McpLevel): LogLevel.LogLevel => {
  switch (level) {
    case "debug":
      return LogLevel.Debug
    case "info":
    case "notice":
      return LogLevel.Info
    case "warning":
      return LogLevel.Warning
    case "error":
      return LogLevel.Error
    case "critical":
    case "alert":
    case "emergency":
      return LogLevel.Fatal
  }
}

const EFFECT_LEVELS: ReadonlyArray<LogLevel.LogLevel> = [
  LogLevel.Trace,
  LogLevel.Debug,
  LogLevel.Info,
  LogLevel.Warning,
  LogLevel.Error,
  LogLevel.Fatal
]

/**
 * The least severe Effect level a client at `threshold` receives: the minimum log level a call must run at for
 * every message the client asked for to reach the loggers. `None` when no Effect level is severe enough (`alert`).
 */
export const lowestWanted = (threshold: McpLevel): LogLevel.LogLevel =>
  EFFECT_LEVELS.find((level) => severity(toMcp(level)) >= severity(threshold)) ?? LogLevel.None

/** Whether a message at `level` passes a client's `threshold`. */
export const passes = (level: LogLevel.LogLevel, threshold: McpLevel): boolean =>
  severity(toMcp(level)) >= severity(threshold)
