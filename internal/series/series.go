// Package series plans and books a series: the sessions of a course (six
// physiotherapy sessions, weekly at the same time with the same
// specialist), booked by staff in one go.
//
// A plan's dates are wall-clock dates in the clinic's zone: every
// session starts at the first one's local time, whatever daylight-saving
// change falls between. Which times are free is the slot engine's answer
// (slots.Service), live holds included, so a time held for a waitlist
// offer or by a patient is not free for a series. Booking holds each
// chosen time (in order, so that two series racing for the same times
// cannot each win some), then books them all in one transaction through
// the booking gate (booking.Service.BookSeries): all or none.
package series

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/idempotency"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
)

// Service plans and books series.
type Service struct {
	pool     *pgxpool.Pool
	slots    *slots.Service
	holds    *holds.Store
	bookings *booking.Service
}

// New is the service over the slot engine, the hold store and the
// booking gate.
func New(pool *pgxpool.Pool, sl *slots.Service, h *holds.Store, b *booking.Service) *Service {
	return &Service{pool: pool, slots: sl, holds: h, bookings: b}
}

// Alternatives is how many free times a session that is not free is
// offered instead, and AlternativeDays how many days after its own are
// looked at for them.
const (
	Alternatives    = 3
	AlternativeDays = 3
)

// Rhythm is how a series repeats: every EveryDays days, Count sessions,
// or as many as fall on or before Until when Count is 0.
type Rhythm struct {
	EveryDays int
	Count     int
	Until     availability.Date
}

// Dates are the starts of a series from first in loc: the same local
// time every EveryDays local days, so that each session keeps its
// wall-clock time across a change of daylight-saving time. A local time
// that a change skips moves as time.Date moves it.
//
// Errors: INVALID_ARGUMENT naming every, count or until.
func Dates(first time.Time, loc *time.Location, r Rhythm) ([]time.Time, error) {
	switch {
	case r.EveryDays < 1 || r.EveryDays > 365:
		return nil, apperr.Invalidf("every", "The sessions must be 1 to 365 days apart.")
	case r.Count < 0 || r.Count > booking.MaxSeriesSessions:
		return nil, apperr.Invalidf("count", "A series has 1 to %d sessions.", booking.MaxSeriesSessions)
	case r.Count == 0 && r.Until == (availability.Date{}):
		return nil, apperr.Invalidf("count", "Give a number of sessions or a last date.")
	}
	local := first.In(loc)
	y, m, d := local.Date()
	var out []time.Time
	for k := 0; ; k++ {
		t := time.Date(y, m, d+k*r.EveryDays, local.Hour(), local.Minute(), 0, 0, loc)
		if (r.Count > 0 && len(out) == r.Count) || (r.Count == 0 && r.Until.Before(availability.DateOf(t, loc))) {
			break
		}
		if len(out) == booking.MaxSeriesSessions {
			return nil, apperr.Invalidf("until", "At most %d sessions fit in one series.", booking.MaxSeriesSessions)
		}
		out = append(out, t.UTC())
	}
	if len(out) == 0 {
		return nil, apperr.Invalidf("until", "The last date is before the first session.")
	}
	return out, nil
}

// PlanRequest asks for a series' plan.
type PlanRequest struct {
	AppointmentTypeID uuid.UUID
	SpecialistID      uuid.UUID
	First             time.Time
	Rhythm            Rhythm
}

// Session is one planned session: its time, whether it is free, and when
// it is not, the nearest free times of the same specialist instead (the
// same day nearest first, then the next days).
type Session struct {
	Start        time.Time
	Free         bool
	Alternatives []time.Time
}

// Plan is a series' sessions as planned.
type Plan struct {
	Location *time.Location
	Duration time.Duration
	Sessions []Session
}

// Plan is the series req asks for: each session, free or not, with its
// alternatives. Nothing is held.
//
// Errors: FORBIDDEN, NOT_FOUND (another clinic's type or specialist),
// INVALID_ARGUMENT (naming the field), UNAVAILABLE.
func (s *Service) Plan(ctx context.Context, u staff.User, req PlanRequest) (Plan, error) {
	loc, err := s.check(ctx, u, req.AppointmentTypeID, req.SpecialistID)
	if err != nil {
		return Plan{}, err
	}
	if req.First.IsZero() {
		return Plan{}, apperr.Invalidf("start", "Choose the first session's time.")
	}
	starts, err := Dates(req.First, loc, req.Rhythm)
	if err != nil {
		return Plan{}, err
	}
	free, typ, err := s.freeAround(ctx, req.AppointmentTypeID, req.SpecialistID, starts, loc)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Location: loc, Duration: typ.Duration}
	for i, st := range starts {
		ses := Session{Start: st, Free: slices.ContainsFunc(free[i], st.Equal)}
		if !ses.Free {
			ses.Alternatives = nearest(free[i], st, starts, loc)
		}
		p.Sessions = append(p.Sessions, ses)
	}
	return p, nil
}

// check is u's right to book, the type and specialist of u's clinic, and
// the clinic's zone.
func (s *Service) check(ctx context.Context, u staff.User, typeID, specialistID uuid.UUID) (*time.Location, error) {
	if err := u.May(staff.ActBook); err != nil {
		return nil, err
	}
	q := db.New(s.pool)
	_, err := q.AppointmentTypeGetInClinic(ctx, db.AppointmentTypeGetInClinicParams{ID: typeID, ClinicID: u.ClinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apperr.NotFoundf("type", "No such appointment type at this clinic.")
	}
	if err != nil {
		return nil, fmt.Errorf("load appointment type: %w", err)
	}
	if _, err := practice.ClinicSpecialist(ctx, q, u.ClinicID, specialistID); err != nil {
		return nil, err
	}
	return s.slots.Zone(ctx, u.ClinicID)
}

// freeAround is, for each start, the specialist's free starts of the
// type (live holds taken out) on its day and the AlternativeDays after,
// read together; and the type as the engine read it.
func (s *Service) freeAround(ctx context.Context, typeID, specialistID uuid.UUID, starts []time.Time, loc *time.Location) ([][]time.Time, availability.AppointmentType, error) {
	reqs := make([]slots.Request, len(starts))
	for i, st := range starts {
		day := availability.DateOf(st, loc)
		reqs[i] = slots.Request{AppointmentTypeID: typeID, SpecialistID: specialistID, From: day, To: day.AddDays(AlternativeDays)}
	}
	res, err := s.slots.FreeEach(ctx, reqs...)
	if err != nil {
		return nil, availability.AppointmentType{}, err
	}
	out := make([][]time.Time, len(res))
	var typ availability.AppointmentType
	for i, r := range res {
		typ = slots.TypeOf(r.Stored)
		for _, sl := range r.Slots {
			if slices.Contains(sl.SpecialistIDs, specialistID) {
				out[i] = append(out[i], sl.Start.UTC())
			}
		}
	}
	return out, typ, nil
}

// nearest are up to Alternatives of free for a session planned at st:
// its own day's nearest first, then the next days' in order; none is
// another planned start.
func nearest(free []time.Time, st time.Time, planned []time.Time, loc *time.Location) []time.Time {
	day := availability.DateOf(st, loc)
	var same, later []time.Time
	for _, f := range free {
		if slices.ContainsFunc(planned, f.Equal) {
			continue
		}
		if availability.DateOf(f, loc) == day {
			same = append(same, f)
		} else {
			later = append(later, f)
		}
	}
	dist := func(t time.Time) time.Duration { return max(t.Sub(st), st.Sub(t)) }
	slices.SortStableFunc(same, func(a, b time.Time) int { return int(dist(a) - dist(b)) })
	slices.SortFunc(later, func(a, b time.Time) int { return a.Compare(b) })
	out := append(same, later...)
	return out[:min(len(out), Alternatives)]
}

// BookRequest books the chosen sessions of a series.
type BookRequest struct {
	AppointmentTypeID uuid.UUID
	SpecialistID      uuid.UUID
	Rhythm            Rhythm      // kept with the series
	Planned           int         // how many sessions were planned
	Starts            []time.Time // the sessions chosen (planned times or alternatives)
	Patient           booking.Patient
	// IdempotencyKey, when set, makes a repeat of the request (a double
	// submit) answer with the first one's receipt and book nothing more.
	IdempotencyKey string
}

// Book books the chosen sessions: each time is held (in time order)
// through the hold store as a desk booking is, so a time another client
// holds (a patient, a waitlist offer) is refused, then all are booked in
// one transaction, which spends the holds. Nothing is booked when any
// time is lost.
//
// Errors: FORBIDDEN, NOT_FOUND, INVALID_ARGUMENT (naming the field),
// SLOT_TAKEN (409, its details naming the session's start: booked, held
// or no longer a free time), IDEMPOTENCY_MISMATCH (422), UNAVAILABLE.
func (s *Service) Book(ctx context.Context, u staff.User, req BookRequest) (booking.SeriesBooked, error) {
	loc, err := s.check(ctx, u, req.AppointmentTypeID, req.SpecialistID)
	if err != nil {
		return booking.SeriesBooked{}, err
	}
	if req.Patient, err = booking.ValidatePatientAs(u.Actor(), req.Patient); err != nil {
		return booking.SeriesBooked{}, err
	}
	if len(req.Starts) == 0 || len(req.Starts) > booking.MaxSeriesSessions {
		return booking.SeriesBooked{}, apperr.Invalidf("starts", "Choose 1 to %d sessions.", booking.MaxSeriesSessions)
	}
	starts := slices.Clone(req.Starts)
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	key, err := bookingKey(u, req, starts)
	if err != nil {
		return booking.SeriesBooked{}, err
	}
	if key.Key == "" {
		return s.book(ctx, u, req, starts, loc, key)
	}
	// Requests with one key go one at a time: a repeat waits for the
	// request it repeats to end, then finds its receipt, instead of
	// failing on the holds that request had taken.
	var out booking.SeriesBooked
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
			"series-key:"+key.ClinicID.String()+":"+key.Principal+":"+key.Key); err != nil {
			return fmt.Errorf("series key lock: %w", err)
		}
		replay, err := findReceipt(ctx, tx, key)
		if err != nil || replay != nil {
			out = booking.SeriesBooked{Replay: replay}
			return err
		}
		out, err = s.book(ctx, u, req, starts, loc, key)
		return err
	})
	return out, err
}

// book holds and books the sorted starts of req.
func (s *Service) book(ctx context.Context, u staff.User, req BookRequest, starts []time.Time, loc *time.Location, key idempotency.Key) (booking.SeriesBooked, error) {
	free, typ, err := s.freeAround(ctx, req.AppointmentTypeID, req.SpecialistID, starts, loc)
	if err != nil {
		return booking.SeriesBooked{}, err
	}
	for i, st := range starts {
		if !slices.ContainsFunc(free[i], st.UTC().Equal) {
			return booking.SeriesBooked{}, booking.SessionTaken(st)
		}
	}
	client := clientOf(u)
	held, err := s.hold(ctx, u.ClinicID, client, req, starts, typ)
	defer s.release(context.WithoutCancel(ctx), held, client)
	if err != nil {
		return booking.SeriesBooked{}, err
	}
	ids := make([]string, len(held))
	for i, h := range held {
		ids[i] = h.HoldID
	}
	out, err := s.bookings.BookSeries(ctx, booking.SeriesRequest{
		ClinicID: u.ClinicID, AppointmentTypeID: req.AppointmentTypeID, SpecialistID: req.SpecialistID,
		EveryDays: req.Rhythm.EveryDays, Planned: req.Planned, Starts: starts, HoldIDs: ids,
		Patient: req.Patient, ClientID: client, Actor: u.Actor(), Key: key,
	})
	var replay *idempotency.ReplayError
	if errors.As(err, &replay) {
		r, derr := decodeReceipt(replay.Record)
		return booking.SeriesBooked{Replay: r}, derr
	}
	if err == nil {
		held = nil // spent by the booking's observers
	}
	return out, err
}

// bookingKey is the idempotency key of u's request ("" Key: none was
// given): the same key with other times, type, specialist or patient is
// another request.
func bookingKey(u staff.User, req BookRequest, starts []time.Time) (idempotency.Key, error) {
	if req.IdempotencyKey == "" {
		return idempotency.Key{}, nil
	}
	if err := idempotency.Validate(req.IdempotencyKey); err != nil {
		return idempotency.Key{}, err
	}
	parts := []string{req.AppointmentTypeID.String(), req.SpecialistID.String(), req.Patient.Name, req.Patient.Email, req.Patient.Phone}
	for _, st := range starts {
		parts = append(parts, st.UTC().Format(time.RFC3339))
	}
	canonical, _ := json.Marshal(parts)
	return idempotency.Key{
		ClinicID: u.ClinicID, Principal: "staff:" + u.ID.String(), Route: "desk:series",
		Key: req.IdempotencyKey, RequestHash: idempotency.HashRequest(canonical),
	}, nil
}

// findReceipt is the receipt kept under key, or nil.
func findReceipt(ctx context.Context, q db.DBTX, key idempotency.Key) (*booking.SeriesReceipt, error) {
	if key.Key == "" {
		return nil, nil
	}
	rec, err := idempotency.Find(ctx, q, key)
	if err != nil || rec == nil {
		return nil, err
	}
	return decodeReceipt(rec)
}

// decodeReceipt reads a kept receipt.
func decodeReceipt(rec *idempotency.Record) (*booking.SeriesReceipt, error) {
	var r booking.SeriesReceipt
	if err := json.Unmarshal(rec.Body, &r); err != nil {
		return nil, fmt.Errorf("read series receipt: %w", err)
	}
	return &r, nil
}

// clientOf is a fresh hold owner for one series of u's.
func clientOf(u staff.User) string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return "desk:" + u.ID.String() + ":" + hex.EncodeToString(r[:])
}

// hold claims each start for client, in order, stopping at the first
// that cannot be held; it returns the holds taken, which the caller lets
// go unless they were booked.
func (s *Service) hold(ctx context.Context, clinicID uuid.UUID, client string, req BookRequest, starts []time.Time, typ availability.AppointmentType) ([]holds.Hold, error) {
	var held []holds.Hold
	for _, st := range starts {
		h, err := s.holds.Claim(ctx, holds.ClaimRequest{
			ClientID: client, ClinicID: clinicID, AppointmentTypeID: req.AppointmentTypeID, SpecialistID: req.SpecialistID,
			Start: st.UTC(), End: st.UTC().Add(typ.Duration), BufferBefore: typ.BufferBefore, BufferAfter: typ.BufferAfter,
			Quota: len(starts),
		})
		var he *holds.HeldError
		var re *holds.ReclaimError
		switch {
		case errors.As(err, &he), errors.As(err, &re), errors.Is(err, holds.ErrQuota):
			return held, booking.SessionTaken(st)
		case err != nil:
			return held, apperr.New(apperr.Unavailable, apperr.CodeUnavailable, "Booking is briefly unavailable. Please try again in a moment.")
		}
		held = append(held, h)
	}
	return held, nil
}

// release lets go of the holds a series did not book.
func (s *Service) release(ctx context.Context, held []holds.Hold, client string) {
	for _, h := range held {
		_, _ = s.holds.Release(ctx, h.HoldID, client)
	}
}
