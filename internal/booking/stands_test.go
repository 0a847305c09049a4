package booking_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
)

// A booking that names the clinic's verification mode it was let through
// under is written only while the clinic's mode is that one, on every
// path: no hooks, hooks in one batch, a hook with a Before step, and the
// step-by-step gate. Refused, nothing of it is written, its hooks' writes
// neither.
func TestBookGoesByTheVerificationModeOnlyWhileItStands(t *testing.T) {
	gates(t, func(t *testing.T, b bundle) {
		ctx := context.Background()
		touch := func(ctx context.Context, tx pgx.Tx, ch booking.Change) error {
			_, err := tx.Exec(ctx, `UPDATE clinics SET name = name || '!' WHERE id = $1`, ch.Booking.ClinicID)
			return err
		}
		queueTouch := func(ctx context.Context, tx pgx.Tx, _ db.DBTX, ch booking.Change) error { return touch(ctx, tx, ch) }
		services := map[string]*booking.Service{
			"no hooks": b.svc,
			"batch":    booking.New(b.pool, booking.Options{TxHooks: []booking.TxHook{{Name: "touch", Queue: queueTouch}}}),
			"before":   booking.New(b.pool, booking.Options{TxHooks: []booking.TxHook{{Name: "touch", Before: touch, After: touch}}}),
		}
		hour := 8
		for name, svc := range services {
			hour++
			req := b.req(0, 0, b.monday(hour, 0))
			req.ClinicVerification = clinics.VerifyAlways // the clinic's is past_allowance
			if _, err := svc.Book(ctx, req); !errors.Is(err, booking.ErrVerificationChanged) {
				t.Fatalf("%s: booked under a mode the clinic left: %v", name, err)
			}
			if n := countConfirmed(t, b.pool, b.clinic.Specialists[0].ID, req.Start); n != 0 {
				t.Fatalf("%s: %d bookings written under a mode the clinic left", name, n)
			}
			var clinicName string
			if err := b.pool.QueryRow(ctx, `SELECT name FROM clinics WHERE id = $1`, b.clinic.ID).Scan(&clinicName); err != nil {
				t.Fatal(err)
			}
			if clinicName != b.clinic.Name {
				t.Fatalf("%s: a hook's write survived the refused booking: %q", name, clinicName)
			}
			req.ClinicVerification = clinics.VerifyPastAllowance
			if _, err := svc.Book(ctx, req); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if _, err := b.pool.Exec(ctx, `UPDATE clinics SET name = $1 WHERE id = $2`, b.clinic.Name, b.clinic.ID); err != nil {
				t.Fatal(err)
			}
		}
	})
}
