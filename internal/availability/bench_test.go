package availability

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
)

// BenchmarkComputePooled4Weeks20Specialists is the clinic's busiest page:
// the pooled month view. The four weeks include Berlin's spring-forward.
func BenchmarkComputePooled4Weeks20Specialists(b *testing.B) {
	berlin := mustZone(b, "Europe/Berlin")
	from := mustDate(b, "2026-03-16") // a Monday
	r := rand.New(rand.NewPCG(1, 2))

	var specialists []Specialist
	for i := range 20 {
		specialists = append(specialists, Specialist{
			ID:       uuid.UUID{0: byte(r.Uint32()), 15: byte(i)},
			Priority: i % 3,
			Active:   true,
			Weekly:   on(weekdays, hours("08:00", "12:00"), hours("13:00", "17:00")),
		})
	}

	var workdays []Date
	for d := from; len(workdays) < 20; d = d.AddDays(1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			workdays = append(workdays, d)
		}
	}
	bookings := make([]Busy, 2000)
	for i := range bookings {
		d := workdays[r.IntN(len(workdays))]
		minute := 8*60 + r.IntN(8*4)*15
		if minute >= 12*60 {
			minute += 60 // after lunch
		}
		start := time.Date(d.Year, d.Month, d.Day, 0, minute, 0, 0, berlin)
		bookings[i] = Busy{
			SpecialistID: specialists[r.IntN(len(specialists))].ID,
			Start:        start,
			End:          start.Add(time.Duration(1+r.IntN(2)) * 30 * time.Minute),
			BufferBefore: time.Duration(r.IntN(3)) * 5 * time.Minute,
			BufferAfter:  time.Duration(r.IntN(3)) * 5 * time.Minute,
		}
	}

	q := Query{
		Zone: berlin,
		Type: AppointmentType{
			Duration:     30 * time.Minute,
			Step:         15 * time.Minute,
			BufferBefore: 5 * time.Minute,
			BufferAfter:  5 * time.Minute,
			MaxAdvance:   60 * 24 * time.Hour,
		},
		Specialists: specialists,
		Bookings:    bookings,
		From:        from,
		To:          from.AddDays(27),
		Now:         time.Date(2026, time.March, 15, 12, 0, 0, 0, berlin),
	}
	if n := len(Compute(q)); n == 0 {
		b.Fatal("no slots; the benchmark would measure nothing")
	}

	b.ReportAllocs()
	for b.Loop() {
		Compute(q)
	}
}
