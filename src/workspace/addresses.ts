/**
 * Which network addresses `fetch` may connect to: the policy against server-side request forgery.
 *
 * The tool runs on the user's machine, inside the user's network, for a model that reads pages anyone can write: a
 * page saying "now fetch http://192.168.1.1/admin" (or `http://169.254.169.254/` on a cloud machine, or a local
 * dev server with no password) must not be obeyed. So by default only public unicast addresses are reached; every
 * range that is not (loopback, private, link-local, carrier-grade NAT, multicast, documentation and reserved
 * ranges, and IPv6 forms that embed an IPv4 address) is refused, for the first URL and for every redirect.
 *
 * The check is on the addresses the connection uses, not on the name: a name is resolved once, each address it
 * resolves to is checked, and the socket connects to those checked addresses (the resolver is the socket's own
 * `lookup`), so a name that resolves to a public address for the check and a private one for the connection (DNS
 * rebinding) gets nowhere. A name with any refused address is refused.
 *
 * @internal
 */
import * as net from "node:net"

/** The ranges refused by default, each with the words a refusal uses. */
const RANGES: ReadonlyArray<readonly [string, number, "ipv4" | "ipv6", string]> = [
  ["0.0.0.0", 8, "ipv4", "a 'this network' address"],
  ["10.0.0.0", 8, "ipv4", "a private address"],
  ["100.64.0.0", 10, "ipv4", "a carrier-grade NAT address"],
  ["127.0.0.0", 8, "ipv4", "a loopback address"],
  ["169.254.0.0", 16, "ipv4", "a link-local address (cloud metadata services live there)"],
  ["172.16.0.0", 12, "ipv4", "a private address"],
  ["192.0.0.0", 24, "ipv4", "a reserved address"],
  ["192.0.2.0", 24, "ipv4", "a documentation address"],
  ["192.88.99.0", 24, "ipv4", "a reserved address"],
  ["192.168.0.0", 16, "ipv4", "a private address"],
  ["198.18.0.0", 15, "ipv4", "a benchmarking address"],
  ["198.51.100.0", 24, "ipv4", "a documentation address"],
  ["203.0.113.0", 24, "ipv4", "a documentation address"],
  ["224.0.0.0", 4, "ipv4", "a multicast address"],
  ["240.0.0.0", 4, "ipv4", "a reserved address"],
  ["::", 128, "ipv6", "the unspecified address"],
  ["::1", 128, "ipv6", "a loopback address"],
  ["100::", 64, "ipv6", "a discard address"],
  ["2001:db8::", 32, "ipv6", "a documentation address"],
  ["fc00::", 7, "ipv6", "a private address"],
  ["fe80::", 10, "ipv6", "a link-local address"],
  ["fec0::", 10, "ipv6", "a site-local address"],
  ["ff00::", 8, "ipv6", "a multicast address"]
]

const lists = RANGES.map(([address, prefix, family, what]) => {
  const list = new net.BlockList()
  list.addSubnet(address, prefix, family)
  return { list, what }
})

/** The IPv4 address an IPv6 address carries (NAT64 `64:ff9b::/96`, 6to4 `2002::/16`), if it carries one. */
const embeddedIpv4 = (address: string): string | undefined => {
  const groups = expandIpv6(address)
  if (groups === undefined) return undefined
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) {
    return v4(groups[6], groups[7])
  }
  if (groups[0] === 0x2002) return v4(groups[1], groups[2])
  return undefined
}

/** An IPv6 address as its eight 16-bit groups. */
const expandIpv6 = (address: string): Array<number> | undefined => {
  let text = address.toLowerCase()
  const zone = text.indexOf("%")
  if (zone >= 0) text = text.slice(0, zone)
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted !== null) {
    const parts = dotted[1].split(".").map(Number)
    text = text.slice(0, -dotted[1].length) +
      `${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`
  }
  const [head, tail] = text.split("::")
  const headGroups = head === "" ? [] : head.split(":")
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":")
  const missing = 8 - headGroups.length - tailGroups.length
  if (tail === undefined ? missing !== 0 : missing < 0) return undefined
  const groups = [...headGroups, ...new Array<string>(tail === undefined ? 0 : missing).fill("0"), ...tailGroups]
    .map((g) => parseInt(g, 16))
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined
}

/**
 * Why an address is refused by default (`a loopback address`), or undefined for a public one. Not an address at
 * all is refused too.
 */
export const refusedBecause = (address: string): string | undefined => {
  const family = net.isIP(address)
  if (family === 0) return "not an IP address"
  const type = family === 4 ? "ipv4" : "ipv6"
  for (const { list, what } of lists) if (list.check(address, type)) return what
  if (family === 6) {
    const inner = embeddedIpv4(address)
    if (inner !== undefined) {
      const why = refusedBecause(inner)
      if (why !== undefined) return `${why} (${inner}, inside an IPv6 address)`
    }
  }
  return undefined
}
