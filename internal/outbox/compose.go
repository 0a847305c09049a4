package outbox

// Composing: what a message says, from its row and the bookings it names.

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/letters"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/secret"
)

// compose renders message m, minting the manage links it carries.
func (o *Outbox) compose(ctx context.Context, m db.Message) (mail.Message, error) {
	in := letters.Input{Kind: letters.Kind(m.Kind), Language: m.Language, Reason: m.Reason, Now: o.now()}
	to := m.Recipient
	var err error
	switch {
	case m.Kind == KindLookup:
		to, err = o.lookupInput(ctx, m, &in)
	case m.Kind == KindWaitlistJoined || m.Kind == KindWaitlistOffer || m.Kind == KindWaitlistWithdrawn:
		to, err = o.waitlistInput(ctx, m, &in)
	case m.Kind == KindSeries || m.Kind == KindSeriesCancellation:
		err = o.seriesInput(ctx, m, &in)
	default:
		err = o.bookingInput(ctx, m, &in)
	}
	if err != nil {
		return mail.Message{}, err
	}
	if in.Language == "" {
		in.Language = in.Clinic.Language
	}
	in.BookURL = o.link("c", in.Clinic.Slug)
	in.PrivacyURL = o.link("c", in.Clinic.Slug, "privacy")
	l, err := letters.Compose(in)
	if err != nil {
		return mail.Message{}, fmt.Errorf("compose %s: %w", m.Kind, err)
	}
	msg := mail.Message{ID: m.ID.String(), To: to, Subject: l.Subject, Text: l.Text, HTML: l.HTML, Language: in.Language}
	for _, a := range l.Attachments {
		msg.Attachments = append(msg.Attachments, mail.Attachment{Name: a.Name, ContentType: a.ContentType, Data: a.Data})
	}
	return msg, nil
}

// bookingInput fills in the booking a message tells of, its clinic (and,
// for a change, the booking before it). A reminder of a booking no longer
// confirmed has nothing to say.
func (o *Outbox) bookingInput(ctx context.Context, m db.Message, in *letters.Input) error {
	a, clinic, err := o.appointment(ctx, m.BookingID.UUID)
	if err != nil {
		return err
	}
	in.Appointment, in.Clinic = a, clinic
	if stale(m.Kind, a.Booking, o.now()) {
		return errNothingToSend
	}
	if m.PreviousID.Valid {
		p, _, err := o.appointment(ctx, m.PreviousID.UUID)
		if err != nil {
			return err
		}
		in.Previous = &p
	}
	if m.Kind != KindCancellation {
		if in.ManageURL, err = o.manageLink(ctx, a.Booking.ID); err != nil {
			return err
		}
	}
	return nil
}

// stale says a message has nothing true left to tell: a confirmation,
// change notice or reminder of a booking cancelled or moved since (its
// retry came after), or a reminder whose appointment has begun.
func stale(kind string, b booking.Booking, now time.Time) bool {
	switch kind {
	case KindConfirmation, KindChange:
		return b.Status != booking.StatusConfirmed
	case KindReminder:
		return b.Status != booking.StatusConfirmed || !b.Start.After(now)
	}
	return false
}

// appointment is a booking with the names its e-mails give, and its
// clinic, in one query.
func (o *Outbox) appointment(ctx context.Context, id uuid.UUID) (letters.Appointment, clinics.Clinic, error) {
	r, err := db.New(o.pool).MessageBookingContext(ctx, id)
	if err != nil {
		return letters.Appointment{}, clinics.Clinic{}, fmt.Errorf("load booking: %w", err)
	}
	a := letters.Appointment{Booking: booking.FromRow(r.Booking), TypeName: r.TypeName, Specialist: r.SpecialistName,
		TypeTexts: clinics.ParseTranslations(r.TypeTranslations)}
	return a, clinics.FromRow(r.Clinic), nil
}

// lookupInput fills in the list a lookup sends: the address's coming
// bookings at the clinic, each with a link of its own. It goes to the
// address as the bookings have it, not as it was typed.
func (o *Outbox) lookupInput(ctx context.Context, m db.Message, in *letters.Input) (string, error) {
	clinic, err := o.clinics.ByID(ctx, m.ClinicID)
	if err != nil {
		return "", fmt.Errorf("load clinic: %w", err)
	}
	in.Clinic = clinic
	if in.List, err = o.listFor(ctx, m); err != nil {
		return "", err
	}
	return in.List[0].Appointment.Booking.Patient.Email, nil
}

// listFor is the list a lookup sends: the address's coming bookings at
// the clinic, each with a link of its own.
func (o *Outbox) listFor(ctx context.Context, m db.Message) ([]letters.Listed, error) {
	rows, err := db.New(o.pool).BookingUpcomingByEmail(ctx, db.BookingUpcomingByEmailParams{
		ClinicID: m.ClinicID, After: o.now(), Email: m.Recipient,
	})
	if err != nil {
		return nil, fmt.Errorf("list bookings: %w", err)
	}
	if len(rows) == 0 {
		return nil, errNothingToSend
	}
	list := make([]letters.Listed, 0, len(rows))
	for _, r := range rows {
		b := booking.FromRow(r.Booking)
		link, err := o.manageLink(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		list = append(list, letters.Listed{
			Appointment: letters.Appointment{Booking: b, TypeName: r.TypeName, Specialist: r.SpecialistName,
				TypeTexts: clinics.ParseTranslations(r.TypeTranslations)},
			ManageURL: link,
		})
	}
	return list, nil
}

// manageLink mints a new manage link of a booking. Only its hash is
// kept; a retried message carries a new one, and the unsent ones open
// nothing anyone knows of.
func (o *Outbox) manageLink(ctx context.Context, bookingID uuid.UUID) (string, error) {
	token, err := secret.NewToken(32)
	if err != nil {
		return "", fmt.Errorf("manage link: %w", err)
	}
	if err := db.New(o.pool).BookingLinkAdd(ctx, db.BookingLinkAddParams{TokenHash: secret.Hash(token), BookingID: bookingID}); err != nil {
		return "", fmt.Errorf("store manage link: %w", err)
	}
	return o.link("manage", token), nil
}

// link is an absolute link under the public address.
func (o *Outbox) link(parts ...string) string {
	u, err := url.JoinPath(o.cfg.PublicURL, parts...)
	if err != nil {
		return o.cfg.PublicURL
	}
	return u
}
