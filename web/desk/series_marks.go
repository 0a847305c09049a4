package desk

import (
	"strconv"

	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/i18n"
)

// seriesMark is a series' session as the grid marks it: "2/6"; "" for a
// booking of no series.
func seriesMark(m desk.SeriesMark) string {
	if m.Total == 0 {
		return ""
	}
	return strconv.Itoa(m.N) + "/" + strconv.Itoa(m.Total)
}

// seriesSearchMark is what the search adds to a session's status:
// " · Series 2/6".
func seriesSearchMark(tr *i18n.Localizer, m desk.SeriesMark) string {
	if m.Total == 0 {
		return ""
	}
	return " · " + tr.T("series.search_mark", map[string]any{"N": m.N, "Total": m.Total})
}
