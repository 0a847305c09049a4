package booking_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/testkit"
)

// victim is the patient every bypass below tries to book again as.
var victim = booking.Patient{Name: "Vera Victim", Email: "victim.name@gmail.com", Phone: "+49 30 1234567"}

// cooling is a clinic of the test's own whose one type has a day's
// cooldown, with the victim booked at 09:00 by req's gate.
func cooling(t *testing.T, atOnce bool) (bundle, booking.Booking) {
	t.Helper()
	b := setupWith(t, testkit.ClinicOptions{})
	b.atOnce = atOnce
	r := b.req(0, 0, b.monday(9, 0))
	r.Patient = victim
	c, err := b.svc.Book(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return b, c.Booking
}

func setupWith(t *testing.T, o testkit.ClinicOptions) bundle {
	t.Helper()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, o)
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	return bundle{pool: pool, svc: booking.NewService(pool), clinic: c, loc: loc}
}

// refusedOrCooling wants err to be a 400 naming a patient field or the
// cooldown's 429.
func refusedOrCooling(t *testing.T, err error) {
	t.Helper()
	e := apperr.As(err)
	switch {
	case e == nil:
		t.Fatalf("booked: want INVALID_ARGUMENT or COOLDOWN, got %v", err)
	case e.Code == apperr.CodeCooldown && e.Kind == apperr.TooMany:
	case e.Code == apperr.CodeInvalidArgument && (e.Field() == "patient.email" || e.Field() == "patient.phone"):
	default:
		t.Fatalf("want INVALID_ARGUMENT naming the patient's contact or COOLDOWN, got %v", err)
	}
}

// Every spelling of the victim's address and number that reached the
// clinic's mailbox as another patient is refused or meets the cooldown.
func TestEverySpellingOfOnePatientMeetsTheCooldown(t *testing.T) {
	t.Parallel()
	emails := map[string]string{
		"PlusTag":             "victim.name+1@gmail.com",
		"PlusTagAndCase":      "Victim.Name+any@GMail.com",
		"DotsAtGmail":         "victimname@gmail.com",
		"MoreDotsAtGmail":     "v.i.c.t.i.m.n.a.m.e@gmail.com",
		"Googlemail":          "victim.name@googlemail.com",
		"CyrillicO":           "victim.name@gmail.c\u043em",
		"CyrillicInLocalPart": "vict\u0456m.name@gmail.com",
		"GreekOmicron":        "victim.name@gmail.c\u03bfm",
		"FullWidthE":          "victim.nam\uff45@gmail.com",
		"FullWidthInDomain":   "victim.name@gmail.\uff43om",
		"ZeroWidthSpace":      "victim\u200b.name@gmail.com",
		"ZeroWidthJoiner":     "victim\u200d.name@gmail.com",
		"ZeroWidthNonJoiner":  "victim\u200c.name@gmail.com",
		"WordJoiner":          "victim\u2060.name@gmail.com",
		"LRM":                 "victim.name\u200e@gmail.com",
		"RLM":                 "victim.name@\u200fgmail.com",
		"ALM":                 "victim.name@gmail\u061c.com",
		"BOM":                 "\ufeffvictim.name@gmail.com",
		"HangulFiller":        "victim\u3164.name@gmail.com",
		"HalfwidthFiller":     "victim\uffa0.name@gmail.com",
		"TagCharacters":       "victim.name@gmail.com\U000e0041\U000e007f",
		"SoftHyphen":          "vic\u00adtim.name@gmail.com",
		"VariationSelector":   "victim.name\ufe0f@gmail.com",
	}
	phones := map[string]string{
		"PhoneWithInternationalPrefix": "0049 30 1234567",
		"PhoneNational":                "030 1234567",
		"PhoneNationalWithSlash":       "030/123 45 67",
		"PhoneWithTrunkZeroKept":       "+49 (0)30 1234567",
	}
	for _, atOnce := range []bool{false, true} {
		t.Run(map[bool]string{false: "StepByStep", true: "AtOnce"}[atOnce], func(t *testing.T) {
			t.Parallel()
			b, _ := cooling(t, atOnce)
			ctx := context.Background()
			hour := 9
			try := func(p booking.Patient) error {
				// Each on a time of its own, so none is refused as taken.
				hour++
				r := b.req(0, 0, b.monday(10, 0).AddDate(0, 0, hour))
				r.Patient = p
				_, err := b.svc.Book(ctx, r)
				return err
			}
			for name, email := range emails {
				t.Run(name, func(t *testing.T) {
					refusedOrCooling(t, try(booking.Patient{Name: victim.Name, Email: email}))
				})
			}
			for name, phone := range phones {
				t.Run(name, func(t *testing.T) {
					err := try(booking.Patient{Name: victim.Name, Email: "someone.else+" + uuid.NewString()[:8] + "@example.org", Phone: phone})
					if e := apperr.As(err); e == nil || e.Code != apperr.CodeCooldown {
						t.Fatalf("want COOLDOWN, got %v", err)
					}
				})
			}
			if n := testkit.AuditCount(t, b.pool, b.clinic.ID); n != 1 {
				t.Fatalf("%d audit rows, want the victim's one booking", n)
			}
		})
	}
}

// Other patients are not caught by the keys: dots count outside Gmail, a
// tag is part of no other provider's rules that matter here, another
// number is another patient.
func TestOtherPatientsAreNotTheVictim(t *testing.T) {
	t.Parallel()
	b, _ := cooling(t, true)
	ctx := context.Background()
	for i, p := range []booking.Patient{
		{Name: "Vera Victim", Email: "victimname@example.org"},
		{Name: "Vera Victim", Email: "victim.name@example.org"},
		{Name: "Other Patient", Email: "other@gmail.com", Phone: "+49 30 7654321"},
		{Name: "Other Patient", Email: "other2@gmail.com", Phone: "+43 30 1234567"},
	} {
		r := b.req(0, 0, b.monday(10+i, 0))
		r.Patient = p
		if _, err := b.svc.Book(ctx, r); err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
	}
}

// A booking its patient cancels online keeps their cooldown for an hour:
// book, cancel, book again is the e-mail bomb's loop. Staff's cancel
// lifts it.
func TestCancelOnlineKeepsTheCooldown(t *testing.T) {
	t.Parallel()
	for _, atOnce := range []bool{false, true} {
		t.Run(map[bool]string{false: "StepByStep", true: "AtOnce"}[atOnce], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b, first := cooling(t, atOnce)
			again := b.req(0, 0, b.monday(10, 0))
			again.Patient = booking.Patient{Name: victim.Name, Email: "victim.name+again@gmail.com"}

			if _, _, err := b.svc.Cancel(ctx, booking.CancelRequest{BookingID: first.ID, Actor: booking.ActorPatient}); err != nil {
				t.Fatal(err)
			}
			_, err := b.svc.Book(ctx, again)
			e := apperr.As(err)
			if e == nil || e.Code != apperr.CodeCooldown {
				t.Fatalf("book after the patient's cancel: want COOLDOWN, got %v", err)
			}
			if e.RetryAfter <= 59*time.Minute || e.RetryAfter > booking.CancelKeepsCooldown {
				t.Fatalf("Retry-After %s, want the hour a cancel keeps (not the type's day)", e.RetryAfter)
			}

			// An hour after the cancel, it no longer counts.
			if _, err := b.pool.Exec(ctx, `UPDATE bookings SET cancelled_at = now() - interval '61 minutes' WHERE id = $1`, first.ID); err != nil {
				t.Fatal(err)
			}
			second, err := b.svc.Book(ctx, again)
			if err != nil {
				t.Fatalf("book an hour after the cancel: %v", err)
			}

			// Staff's cancel lifts it at once.
			if _, _, err := b.svc.Cancel(ctx, booking.CancelRequest{BookingID: second.Booking.ID, Actor: "staff:" + uuid.NewString()}); err != nil {
				t.Fatal(err)
			}
			again.Start = b.monday(11, 0)
			if again.ClinicID != uuid.Nil {
				again.End = again.Start.Add(30 * time.Minute)
			}
			if _, err := b.svc.Book(ctx, again); err != nil {
				t.Fatalf("book after a staff cancel: %v", err)
			}
		})
	}
}

// A number without its country code is read in the clinic's country: in
// an Austrian clinic, 01 234567 is +43 1 234567, and Vienna's number in
// any spelling is one patient.
func TestPhoneIsReadInTheClinicsCountry(t *testing.T) {
	t.Parallel()
	for _, atOnce := range []bool{false, true} {
		t.Run(map[bool]string{false: "StepByStep", true: "AtOnce"}[atOnce], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setupWith(t, testkit.ClinicOptions{})
			b.atOnce = atOnce
			if _, err := b.pool.Exec(ctx, `UPDATE clinics SET country = 'AT' WHERE id = $1`, b.clinic.ID); err != nil {
				t.Fatal(err)
			}
			book := func(hour int, email, phone string) error {
				r := b.req(0, 0, b.monday(hour, 0))
				r.Patient = booking.Patient{Name: "Anna Wien", Email: email, Phone: phone}
				_, err := b.svc.Book(ctx, r)
				return err
			}
			if err := book(9, "anna@example.at", "01 234567"); err != nil {
				t.Fatal(err)
			}
			for i, phone := range []string{"+43 1 234567", "0043 1 234567", "01/234 567"} {
				err := book(10+i, "other"+string(rune('a'+i))+"@example.at", phone)
				if e := apperr.As(err); e == nil || e.Code != apperr.CodeCooldown {
					t.Fatalf("%s: want COOLDOWN, got %v", phone, err)
				}
			}
			// The same digits in Germany are another number.
			if err := book(14, "berlin@example.de", "+49 1 234567"); err != nil {
				t.Fatalf("a German number with the same digits: %v", err)
			}
		})
	}
}
