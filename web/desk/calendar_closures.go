package desk

import (
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/views"
)

// listClosures puts each closure on the list calendar's days from from
// that it covers, beside the days' overrides: a public holiday, the
// clinic closed, or a specialist away, each with its note. A calendar of
// one specialist shows the clinic's closures and theirs only.
func listClosures(tr *i18n.Localizer, cs []practice.Closure, names map[uuid.UUID]string, from availability.Date, specialist uuid.UUID, days []views.CalendarDayVM) {
	for i := range days {
		d := from.AddDays(i)
		for _, c := range cs {
			if specialist != uuid.Nil && !c.ClinicWide() && c.SpecialistID != specialist {
				continue
			}
			if !c.Covers(c.SpecialistID, d) {
				continue
			}
			what := tr.T("closures.clinic_closed", nil)
			switch {
			case c.Holiday:
				what = tr.T("closures.holiday", nil)
			case !c.ClinicWide():
				what = tr.T("desk.list.closed", map[string]any{"Specialist": names[c.SpecialistID]})
			}
			if c.Note != "" {
				what += " (" + c.Note + ")"
			}
			days[i].Overrides = append(days[i].Overrides, what)
		}
	}
}
