package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// A details form whose key was altered (too long, not printable) is a bad
// request that books nothing and shows the form again, with what was typed
// and a key of the server's, so that sending it once more books.
func TestPageConfirmWithABadKey(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0].ID
	p := invented(1)
	cl := a.newClient(t)
	held := holdNoJS(t, cl, c, typ, sp, freeStarts(c, 1)[0]).Want(http.StatusOK)
	f := detailsForm(t, held.Doc(), p.Name, p.Email, "+49 30 1234567")
	for _, bad := range []string{strings.Repeat("k", 201), "two words", "ü"} {
		f.Values.Set("Idempotency-Key", bad)
		r := cl.Post(f.Action, f.Values)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("key %.20q: %d, want 400:\n%s", bad, r.Status, clip(r.Body, 1500))
		}
		if msg := text(panelOf(r)); strings.Contains(msg, "Idempotency") || !strings.Contains(msg, "send it again") {
			t.Fatalf("key %.20q: the panel says %q, want the form to be sent again", bad, msg)
		}
		if rows, _ := a.confirmedRows(t, c.ID); rows != 0 {
			t.Fatalf("key %.20q: %d bookings, want none", bad, rows)
		}
		g := detailsForm(t, r.Doc(), p.Name, p.Email, "+49 30 1234567")
		if k := g.Values.Get("Idempotency-Key"); k == "" || k == bad {
			t.Fatalf("key %.20q: the form shown again carries %q, want a fresh key", bad, k)
		}
		f = g
	}
	cl.Post(f.Action, f.Values).Want(http.StatusSeeOther)
}
