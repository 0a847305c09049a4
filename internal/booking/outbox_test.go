package booking_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/booking"
)

// failingOutbox writes inside the change's transaction, then fails.
type failingOutbox struct{ kinds []string }

// hooked is a service of b's pool whose changes run enqueue in their
// transaction, after the booking is written, as the outbox's does.
func hooked(b bundle, enqueue func(context.Context, pgx.Tx, booking.Change) error) *booking.Service {
	return booking.New(b.pool, booking.Options{TxHooks: []booking.TxHook{{Name: "e-mails", After: enqueue}}})
}

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
			failing, ok := hooked(b, f.Enqueue), hooked(b, okOutbox{}.Enqueue)
			req := b.req(0, 0, b.monday(10, 0))
			req.Actor = actor
			if _, err := failing.Book(ctx, req); err == nil {
				t.Fatal("booked although the outbox failed")
			}
			if n := countConfirmed(t, b.pool, b.clinic.Specialists[0].ID, req.Start); n != 0 {
				t.Fatalf("%s: %d bookings committed without their e-mail", actor, n)
			}
			c, err := ok.Book(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := failing.Cancel(ctx, booking.CancelRequest{BookingID: c.Booking.ID, Actor: actor}); err == nil {
				t.Fatal("cancelled although the outbox failed")
			}
			if _, err := failing.Reschedule(ctx, booking.RescheduleRequest{BookingID: c.Booking.ID, Start: b.monday(11, 0), Actor: actor}); err == nil {
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

// Each hook's Before step runs in the change's transaction before the
// booking is written and its After step once it is, in the order the
// hooks are given; a Before step that fails writes nothing.
func TestTxHooksRunAroundTheWrite(t *testing.T) {
	gates(t, func(t *testing.T, b bundle) {
		ctx := context.Background()
		var steps []string
		// step records the hook's step and the status the booking of the
		// slot has in tx at that moment ("none" before it exists).
		step := func(name string) func(context.Context, pgx.Tx, booking.Change) error {
			return func(ctx context.Context, tx pgx.Tx, ch booking.Change) error {
				status := "none"
				err := tx.QueryRow(ctx, `SELECT status FROM bookings WHERE specialist_id = $1 AND slot_start = $2 ORDER BY created_at DESC LIMIT 1`,
					ch.Booking.SpecialistID, ch.Booking.Start).Scan(&status)
				if err != nil && !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
				steps = append(steps, ch.Kind+" "+name+" "+status)
				return nil
			}
		}
		svc := booking.New(b.pool, booking.Options{TxHooks: []booking.TxHook{
			{Name: "first", Before: step("first before"), After: step("first after")},
			{Name: "second", Before: step("second before"), After: step("second after")},
		}})
		req := b.req(0, 0, b.monday(10, 0))
		c, err := svc.Book(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := svc.Cancel(ctx, booking.CancelRequest{BookingID: c.Booking.ID, Actor: "staff:x"}); err != nil {
			t.Fatal(err)
		}
		want := []string{
			"confirm first before none", "confirm second before none", "confirm first after confirmed", "confirm second after confirmed",
			"cancel first before confirmed", "cancel second before confirmed", "cancel first after cancelled", "cancel second after cancelled",
		}
		if fmt.Sprint(steps) != fmt.Sprint(want) {
			t.Fatalf("steps\n%v\nwant\n%v", steps, want)
		}

		refusing := booking.New(b.pool, booking.Options{TxHooks: []booking.TxHook{{Name: "refusing",
			Before: func(context.Context, pgx.Tx, booking.Change) error { return errors.New("no") }}}})
		req = b.req(0, 0, b.monday(11, 0))
		if _, err := refusing.Book(ctx, req); err == nil {
			t.Fatal("booked although a Before step failed")
		}
		if n := countConfirmed(t, b.pool, b.clinic.Specialists[0].ID, req.Start); n != 0 {
			t.Fatalf("%d bookings committed although a Before step failed", n)
		}
	})
}
