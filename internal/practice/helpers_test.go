package practice_test

// Helpers the set-up's tests share: a specialist's stored week and the
// week a CONCURRENCY_CONFLICT carries, both sorted.

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/practice"
)

func hoursOf(t testing.TB, pool *pgxpool.Pool, specialistID uuid.UUID) []practice.Range {
	t.Helper()
	rows, err := db.New(pool).WeeklyHoursListBySpecialist(context.Background(), specialistID)
	if err != nil {
		t.Fatalf("weekly hours: %v", err)
	}
	out := make([]practice.Range, len(rows))
	for i, r := range rows {
		out[i] = practice.Range{Weekday: time.Weekday(r.Weekday), StartMin: int(r.StartMin), EndMin: int(r.EndMin)}
	}
	return out
}

func sortRanges(rs []practice.Range) []practice.Range {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b practice.Range) int {
		if a.Weekday != b.Weekday {
			return int(a.Weekday) - int(b.Weekday)
		}
		return a.StartMin - b.StartMin
	})
	return rs
}

// currentHours is the week a CONCURRENCY_CONFLICT carries as the current
// values, sorted.
func currentHours(t testing.TB, err error) []practice.Range {
	t.Helper()
	ae := apperr.As(err)
	if ae == nil {
		t.Fatalf("not an app error: %v", err)
	}
	b, merr := json.Marshal(ae.Details["current"])
	if merr != nil {
		t.Fatalf("details.current %v: %v", ae.Details["current"], merr)
	}
	var cur struct {
		Hours []practice.Range `json:"hours"`
	}
	if err := json.Unmarshal(b, &cur); err != nil {
		t.Fatalf("details.current %s: %v", b, err)
	}
	return sortRanges(cur.Hours)
}
