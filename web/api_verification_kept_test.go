package web_test

// The clinic's verification mode as a server keeps it in memory: a
// booking goes by it only while it stands.

import (
	"context"
	"net/http"
	"testing"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/testkit"
)

// A clinic that starts asking every patient for a code is obeyed by the
// next online booking, though the server went by the mode it kept from
// the booking before: the booking's transaction finds the mode changed,
// writes nothing, and the mode read again asks for the code.
func TestVerificationModeKeptIsCheckedByTheBooking(t *testing.T) {
	t.Parallel()
	a, srv := verifyApp(t, program.Options{})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	starts := freeStarts(c, 2)
	first := clientID()
	a.bookFor(t, c.Types[0].ID, a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[0], first), first, invented(1))

	a.setVerification(t, c, clinics.VerifyAlways)
	client, p := clientID(), invented(2)
	r := a.tryBook(t, c.Types[0].ID, a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[1], client), client, p)
	wantError(t, r, http.StatusPreconditionRequired, "VERIFICATION_REQUIRED", "code")
	codeSentTo(t, srv, 1, p.Email)
	var n int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings WHERE clinic_id = $1`, c.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d bookings at the clinic, want only the one made before the change", n)
	}
}
