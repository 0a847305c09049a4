package desk

import (
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/views"
)

// gridClosures are the closures a grid of specialists sps shows above
// itself: the clinic's, and those of the specialists shown, each with its
// note. The closed days' columns are greyed as any closed day is.
func gridClosures(cs []practice.Closure, sps []desk.GridSpecialist) []views.GridClosureVM {
	names := make(map[uuid.UUID]string, len(sps))
	for _, sp := range sps {
		names[sp.ID] = sp.Name
	}
	var out []views.GridClosureVM
	for _, c := range cs {
		name, shown := names[c.SpecialistID]
		if !c.ClinicWide() && !shown {
			continue
		}
		out = append(out, views.GridClosureVM{First: c.First, Last: c.Last, Who: name, Note: c.Note, Holiday: c.Holiday})
	}
	return out
}
