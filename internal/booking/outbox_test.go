package booking_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/booking"
)

// failingOutbox writes inside the change's transaction, then fails.
type failingOutbox struct{ kinds []string }

func (f *failingOutbox) Enqueue(ctx context.Context, tx pgx.Tx, ch booking.Change) error {
	f.kinds = append(f.kinds, ch.Kind)
	if tx == nil {
		return errors.New("no transaction")
	}
	if _, err := tx.Exec(ctx, `UPDATE clinics SET name = name || '!' WHERE id = $1`, ch.Booking.ClinicID); err != nil {
		return err
	}
	return errors.New("outbox down")
}

type okOutbox struct{}

func (okOutbox) Enqueue(context.Context, pgx.Tx, booking.Change) error { return nil }

// An outbox that fails takes every change down with it: no booking,
// cancel or move commits without its e-mails, and nothing the outbox wrote
// in the transaction survives.
func TestOutboxFailureRollsBackTheChange(t *testing.T) {
	for _, actor := range []string{"patient", "staff:x"} {
		gates(t, func(t *testing.T, b bundle) {
			ctx := context.Background()
			f := &failingOutbox{}
			b.svc.SetOutbox(f)
			req := b.req(0, 0, b.monday(10, 0))
			req.Actor = actor
			if _, err := b.svc.Book(ctx, req); err == nil {
				t.Fatal("booked although the outbox failed")
			}
			if n := countConfirmed(t, b.pool, b.clinic.Specialists[0].ID, req.Start); n != 0 {
				t.Fatalf("%s: %d bookings committed without their e-mail", actor, n)
			}
			b.svc.SetOutbox(okOutbox{})
			c, err := b.svc.Book(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			b.svc.SetOutbox(f)
			if _, _, err := b.svc.Cancel(ctx, booking.CancelRequest{BookingID: c.Booking.ID, Actor: actor}); err == nil {
				t.Fatal("cancelled although the outbox failed")
			}
			if _, err := b.svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: c.Booking.ID, Start: b.monday(11, 0), Actor: actor}); err == nil {
				t.Fatal("moved although the outbox failed")
			}
			got, _ := b.svc.Get(ctx, c.Booking.ID, b.clinic.ID)
			if got.Status != booking.StatusConfirmed {
				t.Fatalf("status %s after failed changes", got.Status)
			}
			var name string
			_ = b.pool.QueryRow(ctx, `SELECT name FROM clinics WHERE id = $1`, b.clinic.ID).Scan(&name)
			if name != b.clinic.Name {
				t.Fatalf("the outbox's write survived: %q", name)
			}
		})
	}
}
