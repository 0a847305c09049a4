// Package clientaddr names the network a client's address belongs to, the
// unit that per-address limits count: one IPv4 address, or one IPv6 /64
// (what one subscriber line is usually given whole, so counting single
// IPv6 addresses would let one household be anybody).
package clientaddr

import "net/netip"

// Network returns the network of ip: an IPv4 address as it is (also when
// written IPv4-mapped, "::ffff:192.0.2.1"), an IPv6 address as its /64
// prefix ("2001:db8::/64"). A zone ("fe80::1%eth0") is dropped. ok is false
// when ip is not an IP address.
func Network(ip string) (network string, ok bool) {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "", false
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String(), true
	}
	p, err := a.Prefix(64)
	if err != nil {
		return "", false
	}
	return p.String(), true
}
