package clinics

import (
	_ "embed"
	"slices"
	"strings"
	_ "time/tzdata" // the listed zones resolve from the binary's own copy, also where the machine has no zoneinfo (the container image)
)

// zonesTxt is the zones a country uses, one a line: the third column of
// the tz database's zone.tab (release 2025b), without its aliases for old
// names and its Etc/ zones. The list is carried in the binary rather than
// read from /usr/share/zoneinfo, which a bare machine or the container
// image lacks, and Go cannot list the zones of time/tzdata.
//
//go:embed zones.txt
var zonesTxt string

// UTC is the zone a clinic picks that keeps no local time.
const UTC = "UTC"

// Zones are the IANA zones a clinic's zone is picked from, sorted by
// name, then UTC. Each resolves with LoadZone (a test says so).
func Zones() []string {
	out := strings.Fields(zonesTxt)
	slices.Sort(out)
	return append(out, UTC)
}

// ZoneRegion is the first part of a zone's name ("Europe" for
// Europe/Berlin), "" for UTC.
func ZoneRegion(name string) string {
	region, _, ok := strings.Cut(name, "/")
	if !ok {
		return ""
	}
	return region
}
