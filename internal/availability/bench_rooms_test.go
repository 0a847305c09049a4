package availability

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
)

// BenchmarkComputePooled4Weeks20Specialists5Rooms is the pooled month view
// of a type that needs a room: the busiest page's work, and five rooms of
// the kind (two with weekly hours, one closed for a day) whose 2,000
// bookings of other types leave some slots without a room.
func BenchmarkComputePooled4Weeks20Specialists5Rooms(b *testing.B) {
	berlin := mustZone(b, "Europe/Berlin")
	from := mustDate(b, "2026-03-16") // a Monday; four weeks with the spring-forward
	r := rand.New(rand.NewPCG(3, 4))
	q := benchQuery(b, berlin, from, r)

	rooms := make([]Resource, 5)
	for i := range rooms {
		rooms[i] = Resource{ID: uuid.UUID{0: byte(r.Uint32()), 15: byte(i)}, AlwaysOpen: i < 3}
		if !rooms[i].AlwaysOpen {
			rooms[i].Weekly = on(weekdays, hours("07:30", "17:30"))
		}
	}
	rooms[0].Closed = []Date{from.AddDays(3)}
	busy := make([]ResourceBusy, 2000)
	for i := range busy {
		d := from.AddDays(r.IntN(26))
		start := time.Date(d.Year, d.Month, d.Day, 0, 8*60+r.IntN(9*4)*15, 0, 0, berlin)
		busy[i] = ResourceBusy{ResourceID: rooms[r.IntN(len(rooms))].ID, Start: start, End: start.Add(time.Duration(1+r.IntN(2)) * 30 * time.Minute)}
	}
	q.NeedsResource, q.Resources, q.ResourceBusy = true, rooms, busy
	without := q
	without.NeedsResource = false
	if n, all := len(Compute(q)), len(Compute(without)); n == 0 || n == all {
		b.Fatalf("%d slots with rooms of %d without: the rooms must leave some out, not all", n, all)
	}

	b.ReportAllocs()
	for b.Loop() {
		Compute(q)
	}
}

// benchQuery is the pooled four weeks of BenchmarkComputePooled4Weeks20Specialists:
// 20 specialists working 08:00-12:00 and 13:00-17:00 on weekdays, 2,000
// bookings of theirs.
func benchQuery(b *testing.B, loc *time.Location, from Date, r *rand.Rand) Query {
	b.Helper()
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
		start := time.Date(d.Year, d.Month, d.Day, 0, minute, 0, 0, loc)
		bookings[i] = Busy{
			SpecialistID: specialists[r.IntN(len(specialists))].ID,
			Start:        start,
			End:          start.Add(time.Duration(1+r.IntN(2)) * 30 * time.Minute),
			BufferBefore: time.Duration(r.IntN(3)) * 5 * time.Minute,
			BufferAfter:  time.Duration(r.IntN(3)) * 5 * time.Minute,
		}
	}
	return Query{
		Zone: loc,
		Type: AppointmentType{
			Duration: 30 * time.Minute, Step: 15 * time.Minute,
			BufferBefore: 5 * time.Minute, BufferAfter: 5 * time.Minute,
			MaxAdvance: 60 * 24 * time.Hour,
		},
		Specialists: specialists,
		Bookings:    bookings,
		From:        from,
		To:          from.AddDays(27),
		Now:         time.Date(2026, time.March, 15, 12, 0, 0, 0, loc),
	}
}
