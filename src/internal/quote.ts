/**
 * Outside text (a model's path, flag, value or line) in a message, bounded: a message quotes the start of what it
 * refuses, never all of it, so a megabyte of input never comes back as a megabyte of error.
 *
 * @internal
 */

/** The most characters of outside text a message quotes: past it, the text is cut and ends with `…`. */
export const MAX_QUOTED_LENGTH = 120

/** Outside text as it is, cut past {@link MAX_QUOTED_LENGTH} characters. */
export const cut = (text: string): string =>
  text.length > MAX_QUOTED_LENGTH ? `${text.slice(0, MAX_QUOTED_LENGTH)}…` : text

/** Outside text in JSON string syntax (quotes, escapes), cut past {@link MAX_QUOTED_LENGTH} characters. */
export const quoted = (text: string): string => JSON.stringify(cut(text))
