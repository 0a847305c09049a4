package waitlist

// Joining and leaving the list, and reading a place by its link.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/staff"
)

// JoinRequest is a patient asking to wait.
type JoinRequest struct {
	ClinicID, AppointmentTypeID uuid.UUID
	SpecialistID                uuid.UUID // uuid.Nil: any who performs the type
	From, To                    string    // YYYY-MM-DD, in the clinic's zone
	Times                       []string  // any of Morning, Afternoon, Evening
	Patient                     booking.Patient
	ClientID, Language          string
}

// Join puts the patient on the list, unconfirmed, and writes the e-mail
// whose link leads to the page that confirms the place (Confirm). It
// returns the entry and the token of its page (shown once), which shows
// the place but cannot confirm it: whoever joins need not own the
// address. Errors: INVALID_ARGUMENT naming the field (from,
// to, times, specialistId, patient.*), NOT_FOUND for a type not of the
// clinic, WAITLIST_DUPLICATE (409) when the address already waits for
// the type.
func (s *Service) Join(ctx context.Context, req JoinRequest) (Entry, string, error) {
	patient, err := booking.ValidatePatient(req.Patient)
	if err != nil {
		return Entry{}, "", err
	}
	q := db.New(s.pool)
	t, err := q.AppointmentTypeGet(ctx, req.AppointmentTypeID)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && t.ClinicID != req.ClinicID) {
		return Entry{}, "", apperr.NotFoundf("appointmentTypeId", "No such appointment type.")
	}
	if err != nil {
		return Entry{}, "", fmt.Errorf("load appointment type: %w", err)
	}
	from, to, err := s.days(ctx, req, t)
	if err != nil {
		return Entry{}, "", err
	}
	times, err := checkTimes(req.Times)
	if err != nil {
		return Entry{}, "", err
	}
	if err := s.checkSpecialist(ctx, q, req); err != nil {
		return Entry{}, "", err
	}
	emailKey, phoneKey, err := booking.PatientKeys(ctx, q, req.ClinicID, patient)
	if err != nil {
		return Entry{}, "", err
	}
	token, err := secret.NewToken(32)
	if err != nil {
		return Entry{}, "", err
	}
	p := db.WaitlistEntryInsertParams{
		ID: uuid.New(), ClinicID: req.ClinicID, AppointmentTypeID: t.ID,
		SpecialistID: uuid.NullUUID{UUID: req.SpecialistID, Valid: req.SpecialistID != uuid.Nil},
		FromDate:     from, ToDate: to, Times: times,
		PatientName: patient.Name, PatientEmail: patient.Email, PatientPhone: patient.Phone,
		PatientEmailKey: emailKey, PatientPhoneKey: phoneKey,
		Language: req.Language, ClientID: req.ClientID, JoinedAt: s.now().UTC(),
	}
	var row db.WaitlistEntry
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		var err error
		if row, err = q.WaitlistEntryInsert(ctx, p); err != nil {
			return err
		}
		if err := q.WaitlistLinkAdd(ctx, db.WaitlistLinkAddParams{TokenHash: secret.Hash(token), EntryID: row.ID}); err != nil {
			return fmt.Errorf("store waitlist link: %w", err)
		}
		if err := audit.Write(ctx, q, audit.Entry{ClinicID: row.ClinicID, Actor: booking.ActorPatient,
			Action: "waitlist.join", Entity: "waitlist_entry", EntityID: row.ID.String()}); err != nil {
			return err
		}
		return s.mail(ctx, tx, outbox.KindWaitlistJoined, row, uuid.Nil)
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return Entry{}, "", apperr.New(apperr.Conflict, apperr.CodeWaitlistDuplicate,
			"This e-mail address is already on the waitlist for "+t.Name+". The e-mail we sent has a link to your place.")
	}
	if err != nil {
		return Entry{}, "", fmt.Errorf("join waitlist: %w", err)
	}
	s.stats.Joined.Add(1)
	e := entryFromRow(row)
	e.TypeName, e.TypeTexts = t.Name, clinics.ParseTranslations(t.Translations)
	return e, token, nil
}

// days checks the range asked for: whole days, not past, from before to,
// to within the type's booking window.
func (s *Service) days(ctx context.Context, req JoinRequest, t db.AppointmentType) (from, to time.Time, err error) {
	from, ferr := time.Parse(time.DateOnly, req.From)
	if ferr != nil {
		return from, to, apperr.Invalidf("from", "from must be a date as YYYY-MM-DD")
	}
	to, terr := time.Parse(time.DateOnly, req.To)
	if terr != nil {
		return from, to, apperr.Invalidf("to", "to must be a date as YYYY-MM-DD")
	}
	c, err := db.New(s.pool).ClinicGet(ctx, req.ClinicID)
	if err != nil {
		return from, to, fmt.Errorf("load clinic: %w", err)
	}
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		return from, to, fmt.Errorf("clinic zone: %w", err)
	}
	y, m, d := s.now().In(loc).Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	last := today.AddDate(0, 0, int(t.MaxAdvanceDays))
	switch {
	case from.Before(today):
		return from, to, apperr.Invalidf("from", "from must be today or later")
	case to.Before(from):
		return from, to, apperr.Invalidf("to", "to must be on or after from")
	case to.After(last):
		return from, to, apperr.Invalidf("to", "to must be within the booking window (%d days, until %s)", t.MaxAdvanceDays, last.Format(time.DateOnly))
	}
	return from, to, nil
}

func checkTimes(ts []string) ([]string, error) {
	out := []string{}
	for _, t := range ts {
		switch t {
		case Morning, Afternoon, Evening:
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		default:
			return nil, apperr.Invalidf("times", "times must be any of morning, afternoon, evening")
		}
	}
	return out, nil
}

func (s *Service) checkSpecialist(ctx context.Context, q *db.Queries, req JoinRequest) error {
	if req.SpecialistID == uuid.Nil {
		return nil
	}
	row, err := q.BookingTargetGet(ctx, db.BookingTargetGetParams{AppointmentTypeID: req.AppointmentTypeID, SpecialistID: req.SpecialistID})
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("load specialist: %w", err)
	}
	if err != nil || !row.SpecialistFound || !row.SameClinic || !row.SpecialistActive || !row.Performs {
		return apperr.Invalidf("specialistId", "No such specialist for this appointment type.")
	}
	return nil
}

// mail writes an e-mail of the entry (and offer), when there is an outbox.
func (s *Service) mail(ctx context.Context, tx pgx.Tx, kind string, e db.WaitlistEntry, offerID uuid.UUID) error {
	if s.outbox == nil {
		return nil
	}
	return s.outbox.Write(ctx, tx, db.MessageInsertParams{
		ID: uuid.New(), ClinicID: e.ClinicID, Kind: kind, Recipient: e.PatientEmail, Language: e.Language,
		SendAt: s.now().UTC(), EntryID: uuid.NullUUID{UUID: e.ID, Valid: true},
		OfferID: uuid.NullUUID{UUID: offerID, Valid: offerID != uuid.Nil},
	})
}

// ByToken is the entry a link opens, and the offer when the link is an
// offer's (else a zero Offer). Errors: NOT_FOUND.
func (s *Service) ByToken(ctx context.Context, clinicID uuid.UUID, token string) (Entry, Offer, error) {
	if token == "" {
		return Entry{}, Offer{}, apperr.NotFoundf("token", "No such waitlist place.")
	}
	r, err := db.New(s.pool).WaitlistByLink(ctx, secret.Hash(token))
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && r.WaitlistEntry.ClinicID != clinicID) {
		return Entry{}, Offer{}, apperr.NotFoundf("token", "No such waitlist place.")
	}
	if err != nil {
		return Entry{}, Offer{}, fmt.Errorf("read waitlist link: %w", err)
	}
	e := entryFromRow(r.WaitlistEntry)
	e.TypeName, e.SpecialistName, e.Ahead, e.ByMail = r.TypeName, r.SpecialistName, int(r.Ahead), r.Mailed
	e.TypeTexts = clinics.ParseTranslations(r.TypeTranslations)
	if !r.OfferID.Valid {
		return e, Offer{}, nil
	}
	o, err := s.offer(ctx, db.New(s.pool), r.OfferID.UUID)
	return e, o, err
}

func (s *Service) offer(ctx context.Context, q *db.Queries, id uuid.UUID) (Offer, error) {
	r, err := q.WaitlistOfferGet(ctx, id)
	if err != nil {
		return Offer{}, fmt.Errorf("read offer: %w", err)
	}
	return offerFromRows(r.WaitlistOffer, r.WaitlistOpening), nil
}

// Leave takes the entry its link opens off the list; an offer it has is
// withdrawn and the time goes to the next. Leaving twice is no error.
func (s *Service) Leave(ctx context.Context, clinicID uuid.UUID, token string) error {
	e, _, err := s.ByToken(ctx, clinicID, token)
	if err != nil {
		return err
	}
	return s.end(ctx, e.ID, StateLeft, booking.ActorPatient)
}

// Remove takes an entry off the list for staff member u, audited.
// Errors: FORBIDDEN, NOT_FOUND (not in the clinic's list).
func (s *Service) Remove(ctx context.Context, u staff.User, entryID uuid.UUID) error {
	if err := u.May(ActRemove); err != nil {
		return err
	}
	if _, err := s.entry(ctx, u.ClinicID, entryID); err != nil {
		return err
	}
	return s.end(ctx, entryID, StateRemoved, u.Actor())
}

// end ends an entry (left or removed), withdrawing its live offer, whose
// time then goes to the next at once.
func (s *Service) end(ctx context.Context, entryID uuid.UUID, state, actor string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.WaitlistEntryEnd(ctx, db.WaitlistEntryEndParams{ID: entryID, State: state, EndedAt: ptr(s.now())})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // it had left already
		}
		if err != nil {
			return fmt.Errorf("end entry: %w", err)
		}
		if err := s.withdraw(ctx, tx, q, entryID); err != nil {
			return err
		}
		return audit.Write(ctx, q, audit.Entry{ClinicID: row.ClinicID, Actor: actor,
			Action: "waitlist." + map[string]string{StateLeft: "leave", StateRemoved: "remove"}[state],
			Entity: "waitlist_entry", EntityID: entryID.String()})
	})
}

// withdraw ends the entry's live offer, if any, and runs the job that
// passes its time on now.
func (s *Service) withdraw(ctx context.Context, tx pgx.Tx, q *db.Queries, entryID uuid.UUID) error {
	offerID, err := q.WaitlistOfferOpenOfEntry(ctx, entryID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read offer: %w", err)
	}
	o, err := q.WaitlistOfferEnd(ctx, db.WaitlistOfferEndParams{ID: offerID, State: OfferWithdrawn, EndedAt: ptr(s.now())})
	if err != nil {
		return fmt.Errorf("withdraw offer: %w", err)
	}
	return s.passOnNow(ctx, tx, o)
}

// passOnNow runs the offer's follow-up job at once.
func (s *Service) passOnNow(ctx context.Context, tx pgx.Tx, o db.WaitlistOffer) error {
	if s.outbox == nil || !o.NextJobID.Valid {
		return nil
	}
	return s.outbox.RunJobNow(ctx, tx, o.NextJobID.Int64)
}

func entryFromRow(r db.WaitlistEntry) Entry {
	return Entry{
		ID: r.ID, ClinicID: r.ClinicID, AppointmentTypeID: r.AppointmentTypeID, SpecialistID: r.SpecialistID.UUID,
		From: r.FromDate, To: r.ToDate, Times: r.Times,
		Patient:  booking.Patient{Name: r.PatientName, Email: r.PatientEmail, Phone: r.PatientPhone},
		Language: r.Language, State: r.State, JoinedAt: r.JoinedAt,
		ConfirmedAt: deref(r.ConfirmedAt),
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func offerFromRows(o db.WaitlistOffer, op db.WaitlistOpening) Offer {
	return Offer{
		ID: o.ID, OpeningID: o.OpeningID, EntryID: o.EntryID,
		ClinicID: op.ClinicID, AppointmentTypeID: op.AppointmentTypeID, SpecialistID: op.SpecialistID,
		Start: op.SlotStart, End: op.SlotEnd, State: o.State, OfferedAt: o.OfferedAt, ExpiresAt: o.ExpiresAt,
		BookingID: o.BookingID.UUID, HoldID: op.HoldID,
	}
}

func ptr[T any](v T) *T { return &v }
