package booking

// Series: the sessions of a course booked as one, each through the same
// gate as any booking, all in one transaction; and the cancel of a
// session with every later one, in one transaction too.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/idempotency"
	"github.com/clinic/booking/internal/textfield"
)

// MaxSeriesSessions is the most sessions one series may have.
const MaxSeriesSessions = 52

// SeriesStep is one change's place in a change of a whole series.
type SeriesStep struct {
	ID       uuid.UUID // the series; uuid.Nil: the change is not part of one
	Position int       // the booking's place in the series, from 1
	// First: the first change of the whole, which its e-mail is written
	// with (the others write none of their own).
	First bool
}

// SeriesRequest asks for the chosen sessions of a series.
type SeriesRequest struct {
	ClinicID          uuid.UUID
	AppointmentTypeID uuid.UUID
	SpecialistID      uuid.UUID
	EveryDays         int // the series' rhythm, kept with it
	Planned           int // how many sessions were planned (0: as many as Starts)
	Starts            []time.Time
	// HoldIDs are, for each start in order, the hold it spends ("" none):
	// told to observers, which spend them.
	HoldIDs  []string
	Patient  Patient
	ClientID string
	Actor    string // "staff:<id>": series are booked by staff
	Language string
	// Key, when its Key is set, makes the booking idempotent: its receipt
	// is saved with the sessions, and a request with the same key that was
	// answered before writes nothing and returns *idempotency.ReplayError
	// holding that answer's receipt.
	Key idempotency.Key
}

// SeriesBooked is a series just booked: its sessions in order, each with
// the private token of its own manage link.
type SeriesBooked struct {
	SeriesID uuid.UUID
	Sessions []Confirmation
	// Replay, when set, is the receipt of the request this one repeated
	// (the same idempotency key): nothing was booked now, and Sessions is
	// empty.
	Replay *SeriesReceipt
}

// SeriesReceipt is what the desk says of a series booked, kept as the
// answer to a repeated request: the series, its sessions' ids (so that
// erasing one of them finds the receipt), the first session's time and
// manage link, and the patient's name.
type SeriesReceipt struct {
	SeriesID    uuid.UUID   `json:"seriesId"`
	Bookings    []uuid.UUID `json:"bookingIds"`
	First       time.Time   `json:"first"`
	PatientName string      `json:"patientName"`
	ManageToken string      `json:"manageToken"`
}

// Receipt is the series' receipt (a repeated request's: the first's).
func (b SeriesBooked) Receipt() SeriesReceipt {
	if b.Replay != nil {
		return *b.Replay
	}
	r := SeriesReceipt{SeriesID: b.SeriesID, Bookings: make([]uuid.UUID, len(b.Sessions))}
	for i, s := range b.Sessions {
		r.Bookings[i] = s.Booking.ID
	}
	if len(b.Sessions) > 0 {
		first := b.Sessions[0]
		r.First, r.PatientName, r.ManageToken = first.Booking.Start, first.Booking.Patient.Name, first.ManageToken
	}
	return r
}

// BookSeries books every start of req for one patient with one specialist
// and type, in one transaction: each through the gate a single booking
// goes through (the specialist's lock, the unique index and the exclusion
// constraint, the same checks of type, specialist, length and patient),
// each naming the series and its place in it. Either every start is
// booked or none is.
//
// Errors: INVALID_ARGUMENT (naming the field), NOT_FOUND (type),
// FORBIDDEN (a patient's own request), SLOT_TAKEN (409) naming the start
// that was lost in its details ("slotStartDate").
func (s *Service) BookSeries(ctx context.Context, req SeriesRequest) (SeriesBooked, error) {
	if err := checkSeries(&req); err != nil {
		return SeriesBooked{}, err
	}
	n := len(req.Starts)
	tokens, hashes := make([]string, n), make([][]byte, n)
	for i := range n {
		var err error
		if tokens[i], hashes[i], err = newManageToken(); err != nil {
			return SeriesBooked{}, err
		}
	}
	var out SeriesBooked
	var chs []Change
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out, chs = SeriesBooked{SeriesID: uuid.New()}, nil
		q := db.New(tx)
		for i, start := range req.Starts {
			ch, err := s.bookSession(ctx, tx, q, req, out.SeriesID, i, start, hashes[i])
			if err != nil {
				return err
			}
			chs = append(chs, ch)
			out.Sessions = append(out.Sessions, Confirmation{Booking: ch.Booking, ManageToken: tokens[i]})
		}
		return saveReceipt(ctx, tx, req.Key, out)
	})
	if err != nil {
		return SeriesBooked{}, err
	}
	for _, ch := range chs {
		s.notify(ctx, ch)
	}
	return out, nil
}

// saveReceipt keeps the series' receipt under key, when there is one: a
// request with that key answered first makes this one roll back and
// answer with that request's receipt.
func saveReceipt(ctx context.Context, tx pgx.Tx, key idempotency.Key, out SeriesBooked) error {
	if key.Key == "" {
		return nil
	}
	body, err := json.Marshal(out.Receipt())
	if err != nil {
		return fmt.Errorf("series receipt: %w", err)
	}
	rec, err := idempotency.Save(ctx, tx, key, idempotency.Record{Status: http.StatusCreated, Body: body})
	if err != nil {
		return err
	}
	if rec != nil {
		return &idempotency.ReplayError{Record: rec}
	}
	return nil
}

// checkSeries refuses what no session could be booked with, and puts the
// starts in order.
func checkSeries(req *SeriesRequest) error {
	switch {
	case req.Actor == ActorPatient || req.Actor == "":
		return apperr.New(apperr.Forbidden, apperr.CodeForbidden, "Series are booked by staff.")
	case req.ClinicID == uuid.Nil:
		return apperr.Invalidf("clinicId", "clinicId is required")
	case len(req.Starts) == 0:
		return apperr.Invalidf("starts", "Choose at least one session.")
	case len(req.Starts) > MaxSeriesSessions:
		return apperr.Invalidf("starts", "A series has at most %d sessions.", MaxSeriesSessions)
	case req.EveryDays < 1 || req.EveryDays > 365:
		return apperr.Invalidf("every", "The sessions must be 1 to 365 days apart.")
	case len(req.HoldIDs) != 0 && len(req.HoldIDs) != len(req.Starts):
		return apperr.Invalidf("holds", "One hold per session, or none.")
	}
	if len(req.HoldIDs) == 0 {
		req.HoldIDs = make([]string, len(req.Starts))
	}
	type session struct {
		start time.Time
		hold  string
	}
	ss := make([]session, len(req.Starts))
	for i := range ss {
		ss[i] = session{req.Starts[i].UTC(), req.HoldIDs[i]}
	}
	slices.SortFunc(ss, func(a, b session) int { return a.start.Compare(b.start) })
	for i := range ss {
		if i > 0 && ss[i].start.Equal(ss[i-1].start) {
			return apperr.Invalidf("starts", "The same time is chosen twice.")
		}
		req.Starts[i], req.HoldIDs[i] = ss[i].start, ss[i].hold
	}
	req.Planned = max(req.Planned, len(req.Starts))
	if req.Planned > MaxSeriesSessions {
		return apperr.Invalidf("count", "A series has at most %d sessions.", MaxSeriesSessions)
	}
	return nil
}

// bookSession books the series' session i at start in tx; the first one
// also writes the series, under the specialist's lock.
func (s *Service) bookSession(ctx context.Context, tx pgx.Tx, q *db.Queries, req SeriesRequest, id uuid.UUID, i int, start time.Time, hash []byte) (Change, error) {
	params, err := validate(ctx, q, BookRequest{
		AppointmentTypeID: req.AppointmentTypeID, SpecialistID: req.SpecialistID, Start: start,
		Patient: req.Patient, ClientID: req.ClientID, Actor: req.Actor, ClinicID: req.ClinicID,
	})
	if err != nil {
		return Change{}, err
	}
	if i == 0 {
		if err := lockSpecialist(ctx, q, params.SpecialistID); err != nil {
			return Change{}, err
		}
		if _, err := q.SeriesInsert(ctx, db.SeriesInsertParams{
			ID: id, ClinicID: params.ClinicID, AppointmentTypeID: params.AppointmentTypeID, SpecialistID: params.SpecialistID,
			EveryDays: int32(req.EveryDays), Planned: int32(req.Planned), CreatedBy: req.Actor,
		}); err != nil {
			return Change{}, fmt.Errorf("insert series: %w", err)
		}
	}
	params.ManageTokenHash = hash
	params.Language = language(req.Language)
	step := SeriesStep{ID: id, Position: i + 1, First: i == 0}
	ch := Change{Kind: ChangeConfirm, Booking: pending(params, uuid.Nil), HoldID: req.HoldIDs[i], Actor: req.Actor, Series: step}
	if err := s.before(ctx, tx, ch); err != nil {
		return Change{}, err
	}
	b, err := insert(ctx, q, params)
	if err != nil {
		if apperr.CodeOf(err) == apperr.CodeSlotTaken {
			return Change{}, SessionTaken(start)
		}
		return Change{}, err
	}
	row, err := q.SeriesBookingMark(ctx, db.SeriesBookingMarkParams{
		ID: b.ID, ClinicID: b.ClinicID,
		SeriesID: uuid.NullUUID{UUID: id, Valid: true}, SeriesPosition: pgtype.Int4{Int32: int32(i + 1), Valid: true},
	})
	if err != nil {
		return Change{}, fmt.Errorf("mark series booking: %w", err)
	}
	b = fromRow(row)
	if err := writeAudit(ctx, q, b.ClinicID, req.Actor, "booking.create", b.ID, nil, &b, ""); err != nil {
		return Change{}, err
	}
	ch.Booking = b
	if err := s.after(ctx, tx, ch); err != nil {
		return Change{}, err
	}
	return ch, nil
}

// SessionTaken is the SLOT_TAKEN of a series whose session at start was
// lost: its details name the start, so the page can say which.
func SessionTaken(start time.Time) *apperr.Error {
	e := apperr.New(apperr.Conflict, apperr.CodeSlotTaken,
		fmt.Sprintf("The session at %s is no longer free; nothing was booked.", start.UTC().Format(time.RFC3339)))
	e.Details = map[string]any{"slotStartDate": start.UTC().Format(time.RFC3339)}
	return e
}

// SeriesCancelRequest cancels a session of a series and every later one.
type SeriesCancelRequest struct {
	BookingID uuid.UUID
	ClinicID  uuid.UUID // when set, a booking of another clinic is not found
	Actor     string
	Reason    string
	// Late, when set, says for each session whether its cancel falls
	// inside its change deadline (a patient's own cancel): it is marked
	// late for staff.
	Late func(Booking) (bool, error)
}

// CancelSeriesFrom cancels the booking and every later confirmed session
// of its series, in one transaction: all of them or none. The patient is
// written to once about them all (Change.Series.First). A booking of no
// series is cancelled alone, as Cancel does. It returns the sessions it
// cancelled, in order.
//
// Errors: those of Cancel.
func (s *Service) CancelSeriesFrom(ctx context.Context, req SeriesCancelRequest) ([]Booking, error) {
	reason, err := textfield.Reason.Check(req.Reason)
	if err != nil {
		return nil, err
	}
	b, err := s.Get(ctx, req.BookingID, req.ClinicID)
	if err != nil {
		return nil, err
	}
	if b.SeriesID == uuid.Nil {
		late := false
		if req.Late != nil && b.Status == StatusConfirmed {
			if late, err = req.Late(b); err != nil {
				return nil, err
			}
		}
		c, changed, err := s.Cancel(ctx, CancelRequest{BookingID: b.ID, ClinicID: b.ClinicID, Actor: req.Actor, Reason: reason, Late: late})
		if err != nil || !changed {
			return nil, err
		}
		return []Booking{c}, nil
	}
	var chs []Change
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		chs = nil
		ids, err := db.New(tx).SeriesLaterForUpdate(ctx, db.SeriesLaterForUpdateParams{
			SeriesID: uuid.NullUUID{UUID: b.SeriesID, Valid: true}, ClinicID: b.ClinicID,
			FromPosition: pgtype.Int4{Int32: int32(b.SeriesPosition), Valid: true},
		})
		if err != nil {
			return fmt.Errorf("lock series bookings: %w", err)
		}
		for _, id := range ids {
			one, err := lockBooking(ctx, db.New(tx), id, b.ClinicID)
			if err != nil {
				return err
			}
			cr := CancelRequest{BookingID: id, ClinicID: b.ClinicID, Actor: req.Actor, Reason: reason,
				Series: SeriesStep{ID: b.SeriesID, Position: one.SeriesPosition, First: len(chs) == 0}}
			if req.Late != nil {
				if cr.Late, err = req.Late(one); err != nil {
					return err
				}
			}
			ch, changed, err := s.cancel(ctx, tx, cr)
			if err != nil {
				return err
			}
			if changed {
				chs = append(chs, ch)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Booking, len(chs))
	for i, ch := range chs {
		out[i] = ch.Booking
		s.notify(ctx, ch)
	}
	return out, nil
}

// SeriesSessions are the bookings of the series id at a clinic, in their
// order, whatever their status.
func (s *Service) SeriesSessions(ctx context.Context, id, clinicID uuid.UUID) ([]Booking, error) {
	rows, err := db.New(s.pool).SeriesBookings(ctx, db.SeriesBookingsParams{SeriesID: uuid.NullUUID{UUID: id, Valid: true}, ClinicID: clinicID})
	if err != nil {
		return nil, fmt.Errorf("list series: %w", err)
	}
	out := make([]Booking, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r.Booking)
	}
	return out, nil
}
