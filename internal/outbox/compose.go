package outbox

// Composing: what a message says, from its row and the bookings it names.

import (
	"context"
	"fmt"
	"net/url"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/letters"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/secret"
)

// compose renders message m, minting the manage links it carries.
func (o *Outbox) compose(ctx context.Context, m db.Message) (mail.Message, error) {
	clinic, err := o.clinics.ByID(ctx, m.ClinicID)
	if err != nil {
		return mail.Message{}, fmt.Errorf("load clinic: %w", err)
	}
	in := letters.Input{
		Kind: letters.Kind(m.Kind), Language: m.Language, Clinic: clinic, Reason: m.Reason, Now: o.now(),
		BookURL: o.link("c", clinic.Slug),
	}
	if in.Language == "" {
		in.Language = clinic.Language
	}
	if m.Kind == KindLookup {
		if in.List, err = o.listFor(ctx, m); err != nil {
			return mail.Message{}, err
		}
	} else if err := o.aboutBooking(ctx, m, &in); err != nil {
		return mail.Message{}, err
	}
	l, err := letters.Compose(in)
	if err != nil {
		return mail.Message{}, fmt.Errorf("compose %s: %w", m.Kind, err)
	}
	msg := mail.Message{ID: m.ID.String(), To: m.Recipient, Subject: l.Subject, Text: l.Text, HTML: l.HTML, Language: in.Language}
	for _, a := range l.Attachments {
		msg.Attachments = append(msg.Attachments, mail.Attachment{Name: a.Name, ContentType: a.ContentType, Data: a.Data})
	}
	return msg, nil
}

// aboutBooking fills in the booking a message tells of (and, for a
// change, the one before it). A reminder of a booking no longer confirmed
// has nothing to say.
func (o *Outbox) aboutBooking(ctx context.Context, m db.Message, in *letters.Input) error {
	a, err := o.appointment(ctx, m.BookingID.UUID)
	if err != nil {
		return err
	}
	in.Appointment = a
	if m.Kind == KindReminder && a.Booking.Status != booking.StatusConfirmed {
		return errNothingToSend
	}
	if m.PreviousID.Valid {
		p, err := o.appointment(ctx, m.PreviousID.UUID)
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

func (o *Outbox) appointment(ctx context.Context, id uuid.UUID) (letters.Appointment, error) {
	b, err := booking.NewService(o.pool).Get(ctx, id, uuid.Nil)
	if err != nil {
		return letters.Appointment{}, fmt.Errorf("load booking: %w", err)
	}
	return o.describe(ctx, b)
}

func (o *Outbox) describe(ctx context.Context, b booking.Booking) (letters.Appointment, error) {
	t, err := o.clinics.AppointmentType(ctx, b.AppointmentTypeID)
	if err != nil {
		return letters.Appointment{}, fmt.Errorf("load appointment type: %w", err)
	}
	sp, err := o.clinics.Specialist(ctx, b.SpecialistID)
	if err != nil {
		return letters.Appointment{}, fmt.Errorf("load specialist: %w", err)
	}
	return letters.Appointment{Booking: b, TypeName: t.Name, Specialist: sp.Name}, nil
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
		b, err := booking.NewService(o.pool).Get(ctx, r.ID, m.ClinicID)
		if err != nil {
			return nil, fmt.Errorf("load booking: %w", err)
		}
		link, err := o.manageLink(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		list = append(list, letters.Listed{
			Appointment: letters.Appointment{Booking: b, TypeName: r.TypeName, Specialist: r.SpecialistName},
			ManageURL:   link,
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
