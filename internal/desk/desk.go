package desk

// The front desk: booking a free time by clicking it, under a hold that
// every open page sees, and moving a booking by choosing a free time.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/idempotency"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
)

// Desk books at the front desk the way a patient books online: a hold
// taken through the patients' hold path (so online patients, the grid,
// the kiosk and other screens see the time held), then a booking through
// the same database gate, spending that hold.
type Desk struct {
	bookings *Bookings
	checkout *checkout.Service
	slots    *slots.Service
}

// NewDesk is the desk over the staff bookings, the patients' checkout and
// the slot engine.
func NewDesk(b *Bookings, co *checkout.Service, sl *slots.Service) *Desk {
	return &Desk{bookings: b, checkout: co, slots: sl}
}

// NewDeskClient is a fresh hold owner for one desk dialog of u:
// "desk:<user id>:<random>". Each dialog holds apart, so two receptionists
// (or two tabs) never share a hold.
func NewDeskClient(u staff.User) string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return deskPrefix(u) + hex.EncodeToString(r[:])
}

func deskPrefix(u staff.User) string { return "desk:" + u.ID.String() + ":" }

// checkDeskClient refuses a hold owner that is not one of u's dialogs: a
// form cannot act on another account's holds, nor on a patient's.
func checkDeskClient(u staff.User, clientID string) error {
	if !strings.HasPrefix(clientID, deskPrefix(u)) || checkout.ValidateClientID(clientID) != nil {
		return apperr.Invalidf("client", "This form is not one of yours. Close it and click the time again.")
	}
	return nil
}

// FitType is an appointment type that fits at a time.
type FitType struct {
	ID          uuid.UUID
	Name        string
	DurationMin int
}

// DeskSlot is a time of one specialist as the desk dialog offers it.
type DeskSlot struct {
	Specialist practice.Specialist
	Start      time.Time
	Location   *time.Location
	// Types are the types the specialist performs that fit at Start (it is
	// one of their free slots), in the clinic's order.
	Types []FitType
}

// Fits says whether id is one of the types that fit.
func (s DeskSlot) Fits(id uuid.UUID) bool {
	return slices.ContainsFunc(s.Types, func(t FitType) bool { return t.ID == id })
}

// Slot is the specialist's time as the desk offers it, without holding it.
//
// Errors: FORBIDDEN, NOT_FOUND (another clinic's specialist),
// SLOT_TAKEN (409: booked), SLOT_UNAVAILABLE (409: no type fits there).
func (d *Desk) Slot(ctx context.Context, u staff.User, specialistID uuid.UUID, start time.Time) (DeskSlot, error) {
	if err := u.May(staff.ActBook); err != nil {
		return DeskSlot{}, err
	}
	sp, err := practice.ClinicSpecialist(ctx, db.New(d.bookings.pool), u.ClinicID, specialistID)
	if err != nil {
		return DeskSlot{}, err
	}
	loc, err := d.slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return DeskSlot{}, err
	}
	out := DeskSlot{Specialist: sp, Start: start.UTC(), Location: loc}
	q := db.New(d.bookings.pool)
	types, err := q.AppointmentTypeListByClinic(ctx, u.ClinicID)
	if err != nil {
		return DeskSlot{}, fmt.Errorf("list appointment types: %w", err)
	}
	links, err := q.AppointmentTypeSpecialistListByClinic(ctx, u.ClinicID)
	if err != nil {
		return DeskSlot{}, fmt.Errorf("list type specialists: %w", err)
	}
	day := availability.DateOf(start, loc)
	for _, t := range types {
		performs := slices.ContainsFunc(links, func(l db.AppointmentTypeSpecialistListByClinicRow) bool {
			return l.AppointmentTypeID == t.ID && l.ID == sp.ID && l.Active
		})
		if !performs {
			continue
		}
		// Holds are left out, as the patients' hold path leaves them out:
		// the claim refuses another client's, and this dialog's own must
		// not hide the types it may switch to.
		res, err := d.slots.Free(ctx, slots.Request{AppointmentTypeID: t.ID, SpecialistID: sp.ID, From: day, To: day, NoHolds: true})
		if err != nil {
			return DeskSlot{}, err
		}
		if slices.ContainsFunc(res.Slots, func(sl availability.Slot) bool {
			return sl.Start.Equal(out.Start) && slices.Contains(sl.SpecialistIDs, sp.ID)
		}) {
			out.Types = append(out.Types, FitType{ID: t.ID, Name: t.Name, DurationMin: int(t.DurationMin)})
		}
	}
	if len(out.Types) == 0 {
		return out, d.notFree(ctx, sp, out.Start, loc)
	}
	return out, nil
}

// notFree tells a booked time from one where no type fits.
func (d *Desk) notFree(ctx context.Context, sp practice.Specialist, start time.Time, loc *time.Location) error {
	booked, err := db.New(d.bookings.pool).BookingOverlapExists(ctx, db.BookingOverlapExistsParams{
		SpecialistIds: []uuid.UUID{sp.ID}, RangeStart: start, RangeEnd: start.Add(time.Minute),
	})
	if err != nil {
		return fmt.Errorf("check booked: %w", err)
	}
	if booked {
		return apperr.New(apperr.Conflict, apperr.CodeSlotTaken, fmt.Sprintf("%s is already booked at %s.", sp.Name, start.In(loc).Format("Mon 2 Jan 15:04")))
	}
	return apperr.New(apperr.Conflict, apperr.CodeSlotUnavailable, fmt.Sprintf(
		"No appointment type of %s fits at %s: it is not one of their free times (outside their hours, too soon, or too close to the next booking).",
		sp.Name, start.In(loc).Format("Mon 2 Jan 15:04")))
}

// Hold holds the specialist's time for the desk dialog clientID with type
// typeID (uuid.Nil: the first type that fits), through the patients' hold
// path with all its checks, and lets go of the dialog's other holds (a
// type it held before). Holding what the dialog already holds keeps that
// hold for another TTL.
//
// Errors: FORBIDDEN, those of Slot, INVALID_ARGUMENT (client, appointmentTypeId: a
// type that does not fit), and the hold path's: SLOT_HELD (423),
// SLOT_TAKEN (409), UNAVAILABLE (503).
func (d *Desk) Hold(ctx context.Context, u staff.User, clientID string, specialistID uuid.UUID, start time.Time, typeID uuid.UUID) (DeskSlot, holds.Hold, error) {
	if err := u.May(staff.ActBook); err != nil {
		return DeskSlot{}, holds.Hold{}, err
	}
	if err := checkDeskClient(u, clientID); err != nil {
		return DeskSlot{}, holds.Hold{}, err
	}
	slot, err := d.Slot(ctx, u, specialistID, start)
	if err != nil {
		return slot, holds.Hold{}, err
	}
	if typeID == uuid.Nil {
		typeID = slot.Types[0].ID
	}
	if !slot.Fits(typeID) {
		return slot, holds.Hold{}, apperr.Invalidf("appointmentTypeId", "That appointment type does not fit at this time.")
	}
	h, err := d.checkout.Hold(ctx, checkout.HoldRequest{AppointmentTypeID: typeID, Start: slot.Start, SpecialistID: specialistID, ClientID: clientID})
	if err != nil {
		return slot, holds.Hold{}, err
	}
	// A hold claimed again comes back unchanged: keep it alive.
	if h, err = d.checkout.Heartbeat(ctx, h.HoldID, clientID); err != nil {
		return slot, holds.Hold{}, err
	}
	d.releaseOthers(ctx, u.ClinicID, clientID, h.HoldID)
	return slot, h, nil
}

// Release lets go of every hold of the desk dialog clientID.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (client), UNAVAILABLE.
func (d *Desk) Release(ctx context.Context, u staff.User, clientID string) error {
	if err := u.May(staff.ActBook); err != nil {
		return err
	}
	if err := checkDeskClient(u, clientID); err != nil {
		return err
	}
	active, err := d.bookings.holds.Active(ctx, u.ClinicID)
	if err != nil {
		return apperr.New(apperr.Unavailable, apperr.CodeUnavailable, "Holds are briefly unavailable; the time frees by itself within a minute.")
	}
	for _, h := range active {
		if h.ClientID == clientID {
			if err := d.checkout.Release(ctx, h.HoldID, clientID); err != nil {
				return err
			}
		}
	}
	return nil
}

// releaseOthers lets go of the dialog's holds other than keep; a failure
// only leaves a hold to lapse by itself.
func (d *Desk) releaseOthers(ctx context.Context, clinicID uuid.UUID, clientID, keep string) {
	active, err := d.bookings.holds.Active(ctx, clinicID)
	if err != nil {
		return
	}
	for _, h := range active {
		if h.ClientID == clientID && h.HoldID != keep {
			_ = d.checkout.Release(context.WithoutCancel(ctx), h.HoldID, clientID)
		}
	}
}

// DeskBooking is a booking made in the desk dialog.
type DeskBooking struct {
	ClientID          string
	AppointmentTypeID uuid.UUID
	SpecialistID      uuid.UUID
	Start             time.Time
	Patient           booking.Patient
	IdempotencyKey    string
}

// DeskBooked is a desk booking made, or the answer to the first request
// with the same idempotency key.
type DeskBooked struct {
	BookingID   uuid.UUID `json:"bookingId"`
	Start       time.Time `json:"start"`
	PatientName string    `json:"patientName"`
	ManageToken string    `json:"manageToken"`
	Replayed    bool      `json:"-"`
}

// Book books the dialog's time: it holds it for the chosen type (the
// dialog's hold, or a new one if that lapsed), pins the hold and books
// through the database gate, which spends the hold. The idempotency key
// makes a repeated request (a double click) answer with the first one's
// booking and book nothing more.
//
// Errors: FORBIDDEN, NOT_FOUND (another clinic's type or specialist),
// INVALID_ARGUMENT (naming the field), SLOT_HELD (423), SLOT_TAKEN (409),
// SLOT_UNAVAILABLE (409), HOLD_EXPIRED (410), IDEMPOTENCY_MISMATCH (422),
// UNAVAILABLE (503).
func (d *Desk) Book(ctx context.Context, u staff.User, req DeskBooking) (DeskBooked, error) {
	key, err := d.bookingKey(ctx, u, &req)
	if err != nil {
		return DeskBooked{}, err
	}
	if rec, err := idempotency.Find(ctx, d.bookings.pool, key); err != nil || rec != nil {
		return d.replay(ctx, u, req.ClientID, rec, err)
	}
	out, err := d.book(ctx, u, req, key)
	if err != nil && apperr.CodeOf(err) != apperr.CodeIdempotencyMismatch {
		// A repeat that raced the request it repeats fails on what that
		// request did (its hold spent, its time booked): if that request
		// booked, its answer is this one's too.
		if rec, ferr := idempotency.Find(ctx, d.bookings.pool, key); ferr == nil && rec != nil {
			return d.replay(ctx, u, req.ClientID, rec, nil)
		}
	}
	return out, err
}

// bookingKey checks what can be checked before anything is held and
// returns the request's idempotency key.
func (d *Desk) bookingKey(ctx context.Context, u staff.User, req *DeskBooking) (idempotency.Key, error) {
	if err := u.May(staff.ActBook); err != nil {
		return idempotency.Key{}, err
	}
	_, err := db.New(d.bookings.pool).AppointmentTypeGetInClinic(ctx, db.AppointmentTypeGetInClinicParams{ID: req.AppointmentTypeID, ClinicID: u.ClinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return idempotency.Key{}, apperr.NotFoundf("appointmentTypeId", "No such appointment type at this clinic.")
	}
	if err != nil {
		return idempotency.Key{}, err
	}
	if _, err := practice.ClinicSpecialist(ctx, db.New(d.bookings.pool), u.ClinicID, req.SpecialistID); err != nil {
		return idempotency.Key{}, err
	}
	if err := checkDeskClient(u, req.ClientID); err != nil {
		return idempotency.Key{}, err
	}
	if err := idempotency.Validate(req.IdempotencyKey); err != nil {
		return idempotency.Key{}, err
	}
	if req.Patient, err = booking.ValidatePatientAs(u.Actor(), req.Patient); err != nil {
		return idempotency.Key{}, err
	}
	canonical, _ := json.Marshal([]string{req.ClientID, req.AppointmentTypeID.String(), req.SpecialistID.String(),
		req.Start.UTC().Format(time.RFC3339), req.Patient.Name, req.Patient.Email, req.Patient.Phone})
	return idempotency.Key{
		ClinicID: u.ClinicID, Principal: "staff:" + u.ID.String(), Route: "desk:book",
		Key: req.IdempotencyKey, RequestHash: idempotency.HashRequest(canonical),
	}, nil
}

func (d *Desk) book(ctx context.Context, u staff.User, req DeskBooking, key idempotency.Key) (DeskBooked, error) {
	h, err := d.checkout.Hold(ctx, checkout.HoldRequest{
		AppointmentTypeID: req.AppointmentTypeID, Start: req.Start.UTC(), SpecialistID: req.SpecialistID, ClientID: req.ClientID,
	})
	if err != nil {
		return DeskBooked{}, err
	}
	h, err = d.bookings.holds.Pin(ctx, h.HoldID, req.ClientID, checkout.PinFor)
	switch {
	case errors.Is(err, holds.ErrExpired):
		return DeskBooked{}, apperr.New(apperr.Gone, apperr.CodeHoldExpired, "The hold on this time lapsed. Click Book again.")
	case err != nil:
		return DeskBooked{}, apperr.New(apperr.Unavailable, apperr.CodeUnavailable, "Booking is briefly unavailable. Please try again in a moment.")
	}
	conf, err := d.bookings.bookings.Book(ctx, booking.BookRequest{
		AppointmentTypeID: h.AppointmentTypeID, SpecialistID: h.SpecialistID, Start: h.Start, End: h.End,
		Patient: req.Patient, ClientID: req.ClientID, HoldID: h.HoldID, Actor: u.Actor(), ClinicID: u.ClinicID,
		Remember: &booking.Remember{Key: key, Encode: func(c booking.Confirmation) (int, []byte, error) {
			b, err := json.Marshal(DeskBooked{BookingID: c.Booking.ID, Start: c.Booking.Start, PatientName: c.Booking.Patient.Name, ManageToken: c.ManageToken})
			return http.StatusCreated, b, err
		}},
	})
	var replay *idempotency.ReplayError
	if errors.As(err, &replay) {
		return d.replay(ctx, u, req.ClientID, replay.Record, nil)
	}
	if err != nil {
		return DeskBooked{}, err
	}
	// The booked hold is spent; a type held before goes too.
	d.releaseOthers(ctx, u.ClinicID, req.ClientID, h.HoldID)
	return DeskBooked{BookingID: conf.Booking.ID, Start: conf.Booking.Start, PatientName: conf.Booking.Patient.Name, ManageToken: conf.ManageToken}, nil
}

// replay is the answer stored for a repeated request; the dialog's holds
// go, as after the first request.
func (d *Desk) replay(ctx context.Context, u staff.User, clientID string, rec *idempotency.Record, err error) (DeskBooked, error) {
	if err != nil {
		return DeskBooked{}, err
	}
	var out DeskBooked
	if err := json.Unmarshal(rec.Body, &out); err != nil {
		return DeskBooked{}, fmt.Errorf("read stored desk booking: %w", err)
	}
	out.Replayed = true
	d.releaseOthers(ctx, u.ClinicID, clientID, "")
	return out, nil
}
