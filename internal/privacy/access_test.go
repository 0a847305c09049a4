package privacy_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// bookFor books the clinic's first type with its first specialist at
// start for p, as staff.
func bookFor(t testing.TB, pool *pgxpool.Pool, c testkit.Clinic, start time.Time, p booking.Patient) booking.Booking {
	t.Helper()
	conf, err := booking.NewService(pool).Book(context.Background(), booking.BookRequest{
		AppointmentTypeID: c.Types[0].ID, SpecialistID: c.Specialists[0].ID, Start: start, Patient: p,
		ClientID: "staff", Actor: "staff:test", ClinicID: c.ID,
	})
	if err != nil {
		t.Fatalf("book at %s: %v", start, err)
	}
	return conf.Booking
}

// records are the rows the account wrote, oldest first.
func records(t testing.TB, pool *pgxpool.Pool, staffID uuid.UUID) []db.AccessRecord {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT id, clinic_id, staff_id, at, page, booking_ids, waitlist_ids, message_ids
		FROM access_records WHERE staff_id = $1 ORDER BY id`, staffID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []db.AccessRecord
	for rows.Next() {
		var r db.AccessRecord
		if err := rows.Scan(&r.ID, &r.ClinicID, &r.StaffID, &r.At, &r.Page, &r.BookingIds, &r.WaitlistIds, &r.MessageIds); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAccessRecord(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	loc := testkit.Zone(t, c.Timezone)
	start := testkit.NextWeekday(time.Now(), loc, time.Wednesday, 10, 0)
	ada := bookFor(t, pool, c, start, booking.Patient{Name: "Ada Patient", Email: "ada.access@example.org", Phone: "+49 30 5550100"})
	ada2 := bookFor(t, pool, c, start.Add(time.Hour), booking.Patient{Name: "Ada Patient", Email: "Ada.Access@example.org"})
	bob := bookFor(t, pool, c, start.Add(2*time.Hour), booking.Patient{Name: "Bob Other", Email: "bob.access@example.org"})
	admin := testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	clerk := testkit.StaffUser(t, pool, c.ID, staff.RoleReception)
	rec := privacy.NewRecorder(pool)
	ctx := context.Background()

	t.Run("OneRowPerViewNamingItsBookings", func(t *testing.T) {
		err := rec.Record(ctx, privacy.Access{ClinicID: c.ID, StaffID: clerk.ID, Page: privacy.PageDayGrid, Bookings: []uuid.UUID{ada.ID, bob.ID}})
		if err != nil {
			t.Fatal(err)
		}
		got := records(t, pool, clerk.ID)
		if len(got) != 1 || got[0].Page != "day grid" || !sameIDs(got[0].BookingIds, ada.ID, bob.ID) {
			t.Fatalf("records %+v, want one of the day grid naming both bookings", got)
		}
	})

	t.Run("RepeatWithinTheWindowWrittenOnce", func(t *testing.T) {
		before := len(records(t, pool, clerk.ID))
		for range 3 {
			if err := rec.Record(ctx, privacy.Access{ClinicID: c.ID, StaffID: clerk.ID, Page: privacy.PageDayGrid, Bookings: []uuid.UUID{bob.ID, ada.ID}}); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(records(t, pool, clerk.ID)) - before; n != 0 {
			t.Errorf("the same view again wrote %d records", n)
		}
		// Another page, or other bookings, are another view.
		_ = rec.Record(ctx, privacy.Access{ClinicID: c.ID, StaffID: clerk.ID, Page: privacy.PageDaySheet, Bookings: []uuid.UUID{ada.ID, bob.ID}})
		_ = rec.Record(ctx, privacy.Access{ClinicID: c.ID, StaffID: clerk.ID, Page: privacy.PageDayGrid, Bookings: []uuid.UUID{ada.ID}})
		if n := len(records(t, pool, clerk.ID)) - before; n != 2 {
			t.Errorf("two other views wrote %d records", n)
		}
	})

	t.Run("NothingShownNothingWritten", func(t *testing.T) {
		other := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)
		if err := rec.Record(ctx, privacy.Access{ClinicID: c.ID, StaffID: other.ID, Page: privacy.PageSearch}); err != nil {
			t.Fatal(err)
		}
		if got := records(t, pool, other.ID); len(got) != 0 {
			t.Errorf("an empty view wrote %v", got)
		}
	})

	t.Run("AMessageStandsForItsBooking", func(t *testing.T) {
		other := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)
		var msg uuid.UUID
		if err := pool.QueryRow(ctx, `INSERT INTO messages (id, clinic_id, booking_id, kind, recipient, send_at)
			VALUES (gen_random_uuid(), $1, $2, 'confirmation', 'bob.access@example.org', now()) RETURNING id`, c.ID, bob.ID).Scan(&msg); err != nil {
			t.Fatalf("bob's confirmation: %v", err)
		}
		if err := privacy.RecordAccess(ctx, db.New(pool), privacy.Access{ClinicID: c.ID, StaffID: other.ID, Page: privacy.PageOutbox, Messages: []uuid.UUID{msg}}); err != nil {
			t.Fatal(err)
		}
		got := records(t, pool, other.ID)
		if len(got) != 1 || !sameIDs(got[0].BookingIds, bob.ID) || !sameIDs(got[0].MessageIds, msg) {
			t.Errorf("records %+v, want the message and its booking", got)
		}
	})

	t.Run("AdminReadsPerPatient", func(t *testing.T) {
		wantReadsPerPatient(t, pool, rec, c.ID, admin, clerk, ada, ada2, bob)
	})

	t.Run("AdminReadsPerAccount", func(t *testing.T) {
		email, looks, err := rec.ByStaff(ctx, admin, clerk.ID)
		if err != nil {
			t.Fatal(err)
		}
		if email != clerk.Email || len(looks) != 3 || looks[0].Page != "day grid" || looks[0].Bookings != 1 || looks[2].Bookings != 2 {
			t.Errorf("%s: %+v, want the clerk's three views, newest first", email, looks)
		}
		elsewhere := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
		stranger := testkit.StaffUser(t, pool, elsewhere.ID, staff.RoleStaff)
		_, _, err = rec.ByStaff(ctx, admin, stranger.ID)
		testkit.WantCode(t, err, apperr.CodeNotFound, "another clinic's account")
	})

	wantOnlyAdminsRead(t, pool, rec, c.ID, admin, clerk)
}

// Retention deletes a clinic's records written before the cut and no
// other clinic's.
func TestDeleteAccessBefore(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	ctx := context.Background()
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	other := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	u := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)
	v := testkit.StaffUser(t, pool, other.ID, staff.RoleStaff)
	q := db.New(pool)
	for _, a := range []privacy.Access{
		{ClinicID: c.ID, StaffID: u.ID, Page: privacy.PageSearch, Bookings: []uuid.UUID{uuid.New()}},
		{ClinicID: c.ID, StaffID: u.ID, Page: privacy.PageBooking, Bookings: []uuid.UUID{uuid.New()}},
		{ClinicID: other.ID, StaffID: v.ID, Page: privacy.PageSearch, Bookings: []uuid.UUID{uuid.New()}},
	} {
		if err := privacy.RecordAccess(ctx, q, a); err != nil {
			t.Fatal(err)
		}
	}
	// The first of each clinic is a year old.
	if _, err := pool.Exec(ctx, `UPDATE access_records SET at = now() - interval '400 days'
		WHERE id IN (SELECT min(id) FROM access_records WHERE staff_id = ANY($1) GROUP BY staff_id)`, []uuid.UUID{u.ID, v.ID}); err != nil {
		t.Fatal(err)
	}
	n, err := privacy.DeleteAccessBefore(ctx, q, c.ID, time.Now().AddDate(0, -12, 0))
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want 1", n, err)
	}
	if got := records(t, pool, u.ID); len(got) != 1 || got[0].Page != "booking" {
		t.Errorf("left %+v, want the recent record", got)
	}
	if got := records(t, pool, v.ID); len(got) != 1 {
		t.Errorf("the other clinic kept %d records, want its 1", len(got))
	}
}

func sameIDs(got []uuid.UUID, want ...uuid.UUID) bool {
	if len(got) != len(want) {
		return false
	}
	for _, id := range want {
		if !slices.Contains(got, id) {
			return false
		}
	}
	return true
}

// wantReadsPerPatient checks an admin's read of Ada's record: both her
// bookings by another spelling of her address, the clerk's views of them
// and none of Bob's, an audit row of the read without details, and her
// booking with a phone found by another spelling of the number.
func wantReadsPerPatient(t *testing.T, pool *pgxpool.Pool, rec *privacy.Recorder, clinicID uuid.UUID, admin, clerk staff.User, ada, ada2, bob booking.Booking) {
	t.Helper()
	ctx := context.Background()
	auditBefore := testkit.AuditCount(t, pool, clinicID)
	// Another spelling of Ada's address finds both her bookings.
	found, err := rec.ByPatient(ctx, admin, " ADA.access@example.org ", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Bookings) != 2 || found.Bookings[0].ID != ada.ID || found.Bookings[1].ID != ada2.ID {
		t.Fatalf("bookings %+v, want Ada's two", found.Bookings)
	}
	pages := map[string]bool{}
	for _, l := range found.Looks {
		pages[l.Page] = true
		if l.StaffID != clerk.ID || l.StaffEmail != clerk.Email {
			t.Errorf("a look by %s, who looked at no booking of Ada's", l.StaffEmail)
		}
		if slices.Contains(l.Bookings, bob.ID) {
			t.Errorf("a look lists Bob's booking: %+v", l)
		}
	}
	if !pages["day grid"] || !pages["day sheet"] || pages["outbox"] {
		t.Errorf("pages %v, want the day grid and day sheet and not the outbox (Bob's message)", pages)
	}
	if testkit.AuditCount(t, pool, clinicID) != auditBefore+1 {
		t.Error("reading the record wrote no audit row")
	}
	row := testkit.AuditRows(t, pool, "patient", "")
	if len(row) == 0 || row[len(row)-1].Action != "access.read_patient" || row[len(row)-1].After != nil {
		t.Errorf("audit rows %+v, want access.read_patient without details", row)
	}
	// By phone, in any spelling: the same patient's booking with a phone.
	found, err = rec.ByPatient(ctx, admin, "", "030 5550100")
	if err != nil || len(found.Bookings) != 1 || found.Bookings[0].ID != ada.ID {
		t.Errorf("by phone: %+v, %v", found.Bookings, err)
	}
}

// wantOnlyAdminsRead checks that reception and staff cannot read the
// record, and that a read naming neither address nor number is invalid.
func wantOnlyAdminsRead(t *testing.T, pool *pgxpool.Pool, rec *privacy.Recorder, clinicID uuid.UUID, admin, clerk staff.User) {
	t.Helper()
	ctx := context.Background()
	t.Run("OnlyAdminsRead", func(t *testing.T) {
		for _, u := range []staff.User{clerk, testkit.StaffUser(t, pool, clinicID, staff.RoleStaff)} {
			_, err := rec.ByPatient(ctx, u, "ada.access@example.org", "")
			testkit.WantCode(t, err, apperr.CodeForbidden, u.Role+" per patient")
			_, _, err = rec.ByStaff(ctx, u, clerk.ID)
			testkit.WantCode(t, err, apperr.CodeForbidden, u.Role+" per account")
		}
	})

	t.Run("NeitherAddressNorNumberIsInvalid", func(t *testing.T) {
		_, err := rec.ByPatient(ctx, admin, " ", "")
		if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Invalid || ae.Field() != "email" {
			t.Errorf("err %v, want INVALID naming email", err)
		}
	})
}
