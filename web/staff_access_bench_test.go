package web_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/testkit"
)

// The day grid page (32 bookings) with its access record written (an
// INSERT naming the day's bookings) against the same page whose record
// is a repeat of one just written (only the in-memory check), in turns in
// one run: the price of the record on the staff's most used page. The
// ratio is insert over repeat.
//
//	go test -run '^$' -bench BenchmarkStaffDayGridAccess -benchtime 3s ./web/
func BenchmarkStaffDayGridAccess(b *testing.B) {
	a := newApp(b)
	c := a.clinic(b, testkit.ClinicOptions{Specialists: 2})
	day := c.Next(time.Wednesday, 9, 0).AddDate(0, 0, 7)
	for i := range 16 {
		for _, sp := range c.Specialists {
			a.bookAs(b, c, c.Type0(), sp.ID, day.Add(time.Duration(i)*30*time.Minute), booking.Patient{Name: "Bench Patient", Email: uniqueEmail("bench")})
		}
	}
	cl := a.signIn(b, c.Staff)
	url := a.URL + "/staff/day?date=" + c.Week(day)
	get := func(b *testing.B) {
		res, err := cl.hc.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
	defer a.Deps.Access.SetRepeatWindow(10 * time.Second)
	// Paired, in turns: each insert's view is followed by the same view as
	// a repeat, so the machine's drift falls on both alike.
	var inserted, repeated time.Duration
	n := 0
	for b.Loop() {
		a.Deps.Access.SetRepeatWindow(0)
		t0 := time.Now()
		get(b)
		inserted += time.Since(t0)
		a.Deps.Access.SetRepeatWindow(time.Hour)
		t0 = time.Now()
		get(b)
		repeated += time.Since(t0)
		n++
	}
	b.ReportMetric(float64(inserted.Microseconds())/float64(n), "µs/insert-view")
	b.ReportMetric(float64(repeated.Microseconds())/float64(n), "µs/repeat-view")
	b.ReportMetric(float64(inserted)/float64(repeated), "ratio")
}
