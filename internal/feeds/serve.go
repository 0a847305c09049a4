// The phones' side: a feed's body by its token, cached.

package feeds

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/ics"
	"github.com/clinic/booking/internal/secret"
)

// Body is a feed as served: the iCalendar text and its ETag (quoted).
type Body struct {
	ID   uuid.UUID // the feed's, which the per-address limit counts by
	ETag string
	Text []byte
}

// Serve is the feed a token opens.
//
// Errors: NOT_FOUND for a token that is not a feed's, was revoked or
// replaced, or is the own feed of a disabled account.
func (s *Service) Serve(ctx context.Context, token string) (Body, error) {
	hash := secret.Hash(token)
	f, err := db.New(s.pool).CalendarFeedByToken(ctx, hash)
	// The index finds the row by the token's SHA-256, whose timing tells
	// nothing of the token; the constant-time check is the one a change of
	// the lookup could not weaken.
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && subtle.ConstantTimeCompare(f.TokenHash, hash) != 1) {
		return Body{}, apperr.NotFoundf("", "No such calendar.")
	}
	if err != nil {
		return Body{}, err
	}
	if !f.SpecialistID.Valid {
		// An account not linked to a specialist: an empty calendar, which
		// fills once an admin links it.
		return s.seal(f.ID, ics.Feed(f.ClinicName, nil, s.refresh)), nil
	}
	key := cacheKey{clinic: f.ClinicID, specialist: f.SpecialistID.UUID, names: f.FeedPatientNames}
	if b, ok := s.cached(ctx, key); ok {
		b.ID = f.ID
		return b, nil
	}
	text, err := s.build(ctx, f)
	if err != nil {
		return Body{}, err
	}
	b := s.seal(f.ID, text)
	s.store(ctx, key, b)
	return b, nil
}

// seal is text as a Body with its ETag.
func (s *Service) seal(id uuid.UUID, text string) Body {
	sum := sha256.Sum256([]byte(text))
	return Body{ID: id, ETag: `"` + hex.EncodeToString(sum[:16]) + `"`, Text: []byte(text)}
}

// build reads the specialist's bookings around now and writes the feed.
func (s *Service) build(ctx context.Context, f db.CalendarFeedByTokenRow) (string, error) {
	now := s.now()
	rows, err := db.New(s.pool).CalendarFeedBookings(ctx, db.CalendarFeedBookingsParams{
		ClinicID: f.ClinicID, SpecialistID: f.SpecialistID.UUID, Since: now.Add(-spanBack), Until: now.Add(spanAhead),
	})
	if err != nil {
		return "", err
	}
	l := i18n.For(f.Language)
	events := make([]ics.FeedEvent, len(rows))
	for i, r := range rows {
		summary := clinics.ParseTranslations(r.TypeTranslations).Name(f.Language, r.TypeName)
		if f.FeedPatientNames && r.PatientName != "" {
			summary += " – " + r.PatientName
		}
		events[i] = ics.FeedEvent{ID: r.ID, Start: r.SlotStart, End: r.SlotEnd, Changed: r.ChangedAt,
			Summary: summary, Description: l.T(stateKey(r.Attendance), nil)}
	}
	return ics.Feed(f.ClinicName+" – "+f.SpecialistName.String, events, s.refresh), nil
}

// stateKey is the message of a booking's state, by its attendance mark.
func stateKey(attendance string) string {
	switch attendance {
	case "arrived":
		return "feeds.state.arrived"
	case "completed":
		return "feeds.state.attended"
	case "no_show":
		return "feeds.state.no_show"
	}
	return "feeds.state.booked"
}
