package privacy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/identity"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/testkit"
)

// Links from the patient's rows to another patient's are not followed
// nor shown: a booking moved from someone else's (as a hand edit of the
// database could leave it), an e-mail about the patient's booking that
// also names another patient's waitlist place, the other booking's audit
// rows. Bad input and a patient of whom nothing is held are refused.
func TestExportFollowsNoLinkToAnotherPatient(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	ctx := context.Background()
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	tag := strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
	mine, theirs := "mine-"+tag+"@example.org", "theirs-"+tag+"@example.org"
	start := time.Now().Add(48 * time.Hour).Truncate(time.Hour)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	insertBooking := func(id uuid.UUID, sp int, name, email string, from uuid.NullUUID) {
		exec(`INSERT INTO bookings (id, clinic_id, appointment_type_id, specialist_id, slot_start, slot_end, status,
			patient_name, patient_email, patient_email_key, rescheduled_from)
			VALUES ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz + interval '30 minutes', 'confirmed', $6, $7, $8, $9)`,
			id, c.ID, c.Types[0].ID, c.Specialists[sp].ID, start, name, email, identity.EmailKey(email), from)
	}
	theirBooking, myBooking, theirPlace := uuid.New(), uuid.New(), uuid.New()
	insertBooking(theirBooking, 0, "Theo Theirs", theirs, uuid.NullUUID{})
	insertBooking(myBooking, 1, "Mia Mine", mine, uuid.NullUUID{UUID: theirBooking, Valid: true})
	exec(`INSERT INTO waitlist_entries (id, clinic_id, appointment_type_id, from_date, to_date, patient_name, patient_email, patient_email_key)
		VALUES ($1, $2, $3, current_date, current_date + 7, 'Theo Theirs', $4, $5)`, theirPlace, c.ID, c.Types[0].ID, theirs, identity.EmailKey(theirs))
	mixed, change := uuid.New(), uuid.New()
	exec(`INSERT INTO messages (id, clinic_id, booking_id, entry_id, kind, recipient, send_at) VALUES ($1, $2, $3, $4, 'waitlist_offer', $5, now())`,
		mixed, c.ID, myBooking, theirPlace, theirs)
	exec(`INSERT INTO messages (id, clinic_id, booking_id, previous_id, kind, recipient, send_at) VALUES ($1, $2, $3, $4, 'change', $5, now())`,
		change, c.ID, myBooking, theirBooking, mine)
	for _, id := range []uuid.UUID{theirBooking, myBooking} {
		exec(`INSERT INTO audit_log (clinic_id, actor, action, entity, entity_id) VALUES ($1, 'patient', 'booking.create', 'booking', $2)`, c.ID, id.String())
	}

	x := privacy.NewExporter(pool)
	got, err := x.ExportByOperator(ctx, c.ID, mine, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Bookings) != 1 || got.Bookings[0].ID != myBooking || got.Bookings[0].MovedFrom != nil {
		t.Errorf("bookings %+v, want mine without the link to theirs", got.Bookings)
	}
	if len(got.Emails) != 1 || got.Emails[0].ID != change || len(got.Audit) != 1 || got.Audit[0].EntityID != myBooking.String() {
		t.Errorf("e-mails %+v, audit %+v", got.Emails, got.Audit)
	}
	body, err := got.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Theo", theirs, theirBooking.String(), theirPlace.String(), mixed.String()} {
		if strings.Contains(string(body), s) {
			t.Errorf("the export holds %q of the other patient", s)
		}
	}

	for name, tc := range map[string]struct{ email, phone, code, field string }{
		"Nothing":   {"", " ", apperr.CodeInvalidArgument, "email"},
		"NoAt":      {"mine", "", apperr.CodeInvalidArgument, "email"},
		"NoDigits":  {"", "call me", apperr.CodeInvalidArgument, "phone"},
		"Nobody":    {"nobody-" + mine, "", apperr.CodeNotFound, "email"},
		"NobodyTel": {"", "+49 30 000000", apperr.CodeNotFound, "phone"},
	} {
		_, err := x.ExportByOperator(ctx, c.ID, tc.email, tc.phone)
		if ae := apperr.As(err); ae == nil || ae.Code != tc.code || ae.Field() != tc.field {
			t.Errorf("%s: %v, want %s naming %s", name, err, tc.code, tc.field)
		}
	}
}
