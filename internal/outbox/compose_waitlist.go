package outbox

// Composing the waitlist's e-mails: a place taken, a time offered, and an
// offered time withdrawn.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/letters"
	"github.com/clinic/booking/internal/secret"
)

// States of the waitlist's rows that its e-mails look at (the waitlist
// package names them all; the outbox does not depend on it).
const (
	entryWaiting   = "waiting"
	entryOffered   = "offered"
	offerOpen      = "open"
	offerWithdrawn = "withdrawn"
)

// waitlistInput fills in what a waitlist e-mail tells, with a new link to
// the place (or the offer), and returns the address it goes to: the
// entry's. An entry no longer on the list, or an offer no longer open,
// has nothing to say; a withdrawal tells of the offer's time and links
// the place, which the patient keeps.
func (o *Outbox) waitlistInput(ctx context.Context, m db.Message, in *letters.Input) (string, error) {
	if !m.EntryID.Valid {
		return "", fmt.Errorf("%s message %s names no waitlist entry", m.Kind, m.ID)
	}
	offer, withdrawn := m.Kind == KindWaitlistOffer, m.Kind == KindWaitlistWithdrawn
	if (offer || withdrawn) && !m.OfferID.Valid {
		return "", fmt.Errorf("%s message %s names no offer", m.Kind, m.ID)
	}
	r, err := db.New(o.pool).WaitlistMailContext(ctx, db.WaitlistMailContextParams{
		EntryID: m.EntryID.UUID, ClinicID: m.ClinicID, OfferID: m.OfferID,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errNothingToSend
	}
	if err != nil {
		return "", fmt.Errorf("load waitlist entry: %w", err)
	}
	if waitlistStale(r, m.Kind, o.now()) {
		return "", errNothingToSend
	}
	e := r.WaitlistEntry
	in.Clinic = clinics.FromRow(r.Clinic)
	if in.Language == "" {
		in.Language = e.Language
	}
	in.Waitlist = letters.Waitlist{
		Patient: e.PatientName, TypeName: r.TypeName, TypeTexts: clinics.ParseTranslations(r.TypeTranslations), Specialist: r.EntrySpecialistName,
		From: e.FromDate, To: e.ToDate, Times: e.Times, Unconfirmed: !offer && !withdrawn && e.ConfirmedAt == nil,
	}
	path, link := "waitlist", uuid.NullUUID{}
	if offer || withdrawn {
		in.Offer = &letters.Offer{
			Start: *r.OfferStart, End: *r.OfferEnd, Specialist: r.OfferSpecialistName, Until: *r.OfferExpiresAt,
		}
	}
	if offer {
		path, link = "offer", m.OfferID
	}
	token, err := o.waitlistLink(ctx, e.ID, link)
	if err != nil {
		return "", err
	}
	in.Waitlist.URL = o.link("c", in.Clinic.Slug, path, token)
	return e.PatientEmail, nil
}

// waitlistStale says a waitlist e-mail of kind has nothing true left to
// tell: the entry left the list (booked, left, removed, lapsed) before its
// place was confirmed or its offer's withdrawal told, or the offer was
// taken, passed on, withdrawn or ran out before it could be sent (a retry
// after a mail server's delay, say).
func waitlistStale(r db.WaitlistMailContextRow, kind string, now time.Time) bool {
	s := r.WaitlistEntry.State
	switch kind {
	case KindWaitlistJoined:
		return s != entryWaiting && s != entryOffered
	case KindWaitlistWithdrawn:
		return (s != entryWaiting && s != entryOffered) || r.OfferState != offerWithdrawn || r.OfferStart == nil || r.OfferEnd == nil || r.OfferExpiresAt == nil
	}
	if r.OfferState != offerOpen || r.OfferExpiresAt == nil || r.OfferStart == nil || r.OfferEnd == nil {
		return true
	}
	return !r.OfferExpiresAt.After(now)
}

// waitlistLink mints a new link to an entry's page, or with offerID to
// its offer's, and returns its token. Only the hash is kept, as with the
// manage links. The link is marked as mailed: its page can confirm the
// place, since whoever opens it reads the address's mail.
func (o *Outbox) waitlistLink(ctx context.Context, entryID uuid.UUID, offerID uuid.NullUUID) (string, error) {
	token, err := secret.NewToken(32)
	if err != nil {
		return "", fmt.Errorf("waitlist link: %w", err)
	}
	if err := db.New(o.pool).WaitlistLinkAdd(ctx, db.WaitlistLinkAddParams{
		TokenHash: secret.Hash(token), EntryID: entryID, OfferID: offerID, Mailed: true,
	}); err != nil {
		return "", fmt.Errorf("store waitlist link: %w", err)
	}
	return token, nil
}
