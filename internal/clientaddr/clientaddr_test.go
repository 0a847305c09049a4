package clientaddr

import "testing"

func TestNetwork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, ip, want string
		ok             bool
	}{
		{"IPv4AsItIs", "203.0.113.7", "203.0.113.7", true},
		{"IPv4MappedIsUnmapped", "::ffff:198.51.100.1", "198.51.100.1", true},
		{"IPv6ByItsSlashSixtyFour", "2001:db8:1:2:ffff::9", "2001:db8:1:2::/64", true},
		{"IPv6SameSlashSixtyFour", "2001:db8:1:2::1", "2001:db8:1:2::/64", true},
		{"IPv6UpperCaseIsCanonical", "2001:DB8:1:2::1", "2001:db8:1:2::/64", true},
		{"ZoneDropped", "fe80::1%eth0", "fe80::/64", true},
		{"Loopback6", "::1", "::/64", true},
		{"Empty", "", "", false},
		{"NotAnAddress", "not-an-address", "", false},
		{"HostPortIsNotAnAddress", "203.0.113.7:443", "", false},
		{"PrefixIsNotAnAddress", "2001:db8::/64", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := Network(tc.ip)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("Network(%q) = %q, %v; want %q, %v", tc.ip, got, ok, tc.want, tc.ok)
			}
		})
	}
}
