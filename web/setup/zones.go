package setup

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/views"
)

// zoneChoices are the settings page's zones grouped by region, each said
// as people say it with its name and its offset now ("Berlin time
// (Europe/Berlin), UTC+01:00"), sorted by city. The chosen zone is
// selected; one not on the list (an old alias a clinic was made with, or
// a name just refused) is offered first, as it is, so the form keeps it.
func zoneChoices(l *i18n.Localizer, chosen string, now time.Time) (extra []views.OptionVM, groups []views.ZoneGroupVM) {
	byRegion := map[string]*views.ZoneGroupVM{}
	listed := false
	for _, name := range clinics.Zones() {
		opt := views.OptionVM{Value: name, Label: zoneLabel(l, name, now), Selected: name == chosen}
		listed = listed || opt.Selected
		region := clinics.ZoneRegion(name)
		if region == "" {
			extra = append(extra, opt)
			continue
		}
		g := byRegion[region]
		if g == nil {
			g = &views.ZoneGroupVM{Label: regionName(l, region)}
			byRegion[region] = g
		}
		g.Zones = append(g.Zones, opt)
	}
	if !listed && chosen != "" {
		extra = append([]views.OptionVM{{Value: chosen, Label: chosen, Selected: true}}, extra...)
	}
	for _, g := range byRegion {
		slices.SortStableFunc(g.Zones, func(a, b views.OptionVM) int { return cmp.Compare(zoneCity(a.Value), zoneCity(b.Value)) })
		groups = append(groups, *g)
	}
	slices.SortFunc(groups, func(a, b views.ZoneGroupVM) int { return cmp.Compare(a.Label, b.Label) })
	return extra, groups
}

// zoneLabel is one zone of the picker: "Berlin time (Europe/Berlin),
// UTC+01:00"; in another language the region of the name is said in
// that language too ("Berliner Zeit (Europa/Berlin), UTC+01:00").
func zoneLabel(l *i18n.Localizer, name string, now time.Time) string {
	loc, err := clinics.LoadZone(name)
	if err != nil || clinics.ZoneRegion(name) == "" {
		return name
	}
	said := name
	if l.Lang() != i18n.English {
		region, rest, _ := strings.Cut(name, "/")
		said = regionName(l, region) + "/" + rest
	}
	return l.T("admin.zone.option", map[string]any{
		"Zone":   l.Zone(name),
		"Name":   said,
		"Offset": utcOffset(now.In(loc)),
	})
}

// utcOffset is t's offset from UTC: "UTC+01:00", "UTC-03:30".
func utcOffset(t time.Time) string {
	_, off := t.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	return fmt.Sprintf("UTC%s%02d:%02d", sign, off/3600, off%3600/60)
}

// zoneCity is the last part of a zone's name, by which a region's zones
// are sorted.
func zoneCity(name string) string { return name[strings.LastIndex(name, "/")+1:] }

// regionName is the first part of a zone's name in l's words ("Europa").
func regionName(l *i18n.Localizer, region string) string {
	key := "admin.zone.region." + region
	return l.T(key, nil)
}
