package web_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
)

// Anonymous visitors (the patient pages, their streams, the sign-in form)
// store no session: there is nothing to store for them. Not parallel: it
// counts the rows of the whole sessions table.
func TestAnonymousVisitsWriteNoSession(t *testing.T) {
	a := newApp(t)
	c := a.patientClinic(t)
	count := func() int {
		t.Helper()
		var n int
		if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	book := c.BookURL(c.Type0(), c.At(1, 10, 0), uuid.Nil)
	stream := c.BookPath(c.Type0()) + "/live?week=" + c.Week(c.At(1, 10, 0))
	for i := range 100 {
		for _, path := range []string{"/", "/c/" + c.Slug, book, "/staff/login"} {
			r := a.do(t, "GET", path, nil)
			if r.Status >= 400 {
				t.Fatalf("GET %s: %d", path, r.Status)
			}
			if r.Cookie("clinic_session") != nil {
				t.Fatalf("GET %s (visit %d) sets a session cookie", path, i+1)
			}
		}
		s := dialSSE(t, nil, a.URL+stream)
		s.must(evWait, "the stream's first event")
		s.cancel()
	}
	if after := count(); after != before {
		t.Fatalf("400 anonymous page views and 100 stream starts wrote %d session rows", after-before)
	}
}
