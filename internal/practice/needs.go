package practice

// What a type needs, and what setting it does to the type's bookings to
// come: they are given a room, or released from theirs, in the same
// transaction as the need.

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
)

// Need is what a type needs: nothing, one room of a kind, or one room.
type Need struct {
	Kind   string
	RoomID uuid.UUID
}

// None reports whether the type needs no room.
func (n Need) None() bool { return n.Kind == "" && n.RoomID == uuid.Nil }

// TypeNeeds are the needs of the clinic's types that need a room.
//
// Errors: FORBIDDEN.
func (s *Service) TypeNeeds(ctx context.Context, u staff.User) (map[uuid.UUID]Need, error) {
	if err := u.May(staff.ActTypes); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).TypeNeedList(ctx, u.ClinicID)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]Need, len(rows))
	for _, r := range rows {
		out[r.AppointmentTypeID] = Need{Kind: r.ResourceKind.String, RoomID: r.ResourceID.UUID}
	}
	return out, nil
}

// Roomless is a booking to come of a type that needs a room but holds
// none: no room the type may take was free and open at its time when the
// need was set. Staff move it (or free a room).
type Roomless struct {
	ID             uuid.UUID
	Start, End     time.Time
	SpecialistName string
}

// needAudit is the audit row of a need: the need, and how many bookings
// to come it gave a room, released from one, or left without.
type needAudit struct {
	Need     Need `json:"need"`
	Given    int  `json:"given"`
	Released int  `json:"released"`
	Roomless int  `json:"roomless"`
}

// SetTypeNeed sets what a type needs (ActTypes), and makes the type's
// confirmed bookings that have not started agree with it in the same
// transaction:
//
//   - needing no room: their rooms are released (free for other types);
//   - needing a room of a kind or one room: those whose room no longer
//     serves the need are released, then each without a room, soonest
//     first, is given the first free and open room the need allows (as
//     the insert's trigger chooses). Those for which none is free are
//     returned, to be moved by staff; the day grid marks them.
//
// Bookings that have started keep what they have: they record where the
// patient was seen. Locks: the rows of those bookings, in the order of
// their ids, then the rooms the new need may take, in the order of their
// ids, as the trigger takes them: a move locks its booking's row, then
// the specialist, then the rooms, so no order crosses; no specialist's
// lock is taken here. A booking of the type inserted while the need is
// being set reads the need as it was: it may be left without a room, and
// the day grid marks it as it marks those returned here.
//
// Errors: FORBIDDEN, NOT_FOUND (type), INVALID_ARGUMENT (need: a room of
// another clinic, or a kind no room of the clinic has).
func (s *Service) SetTypeNeed(ctx context.Context, u staff.User, typeID uuid.UUID, n Need) ([]Roomless, error) {
	if err := u.May(staff.ActTypes); err != nil {
		return nil, err
	}
	var left []Roomless
	err := s.tx(ctx, u, func(q *db.Queries) error {
		left = nil
		if _, err := q.AppointmentTypeGetInClinic(ctx, db.AppointmentTypeGetInClinicParams{ID: typeID, ClinicID: u.ClinicID}); errors.Is(err, pgx.ErrNoRows) {
			return staff.NotFound("appointment type")
		} else if err != nil {
			return err
		}
		if err := setNeed(ctx, q, u.ClinicID, typeID, n); err != nil {
			return err
		}
		var err error
		audit := needAudit{Need: n}
		if left, audit, err = fitBookings(ctx, q, u.ClinicID, typeID, audit); err != nil {
			return err
		}
		return staff.WriteAudit(ctx, q, u, "type.need", "appointment_type", typeID.String(), nil, audit, "")
	})
	return left, err
}

// setNeed writes the need n of the type, checked against the clinic's
// rooms.
func setNeed(ctx context.Context, q *db.Queries, clinicID, typeID uuid.UUID, n Need) error {
	if n.None() {
		return q.TypeNeedClear(ctx, db.TypeNeedClearParams{ClinicID: clinicID, AppointmentTypeID: typeID})
	}
	p := db.TypeNeedSetParams{ClinicID: clinicID, AppointmentTypeID: typeID}
	if n.RoomID != uuid.Nil {
		if _, err := q.ResourceGet(ctx, db.ResourceGetParams{ClinicID: clinicID, ID: n.RoomID}); errors.Is(err, pgx.ErrNoRows) {
			return apperr.Invalidf("need", "No such room at this clinic.")
		} else if err != nil {
			return err
		}
		p.ResourceID = uuid.NullUUID{UUID: n.RoomID, Valid: true}
	} else {
		if !kindPattern.MatchString(n.Kind) {
			return apperr.Invalidf("need", "No room of that kind at this clinic.")
		}
		rooms, err := q.ResourceList(ctx, clinicID)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(rooms, func(r db.Resource) bool { return r.Kind == n.Kind }) {
			return apperr.Invalidf("need", "No room of that kind at this clinic.")
		}
		p.ResourceKind = pgtype.Text{String: n.Kind, Valid: true}
	}
	return q.TypeNeedSet(ctx, p)
}

// fitBookings makes the type's bookings to come agree with the need just
// written (see SetTypeNeed), returning those left without a room.
func fitBookings(ctx context.Context, q *db.Queries, clinicID, typeID uuid.UUID, audit needAudit) ([]Roomless, needAudit, error) {
	from := time.Now()
	if err := q.TypeBookingsLock(ctx, db.TypeBookingsLockParams{ClinicID: clinicID, AppointmentTypeID: typeID, FromTime: from}); err != nil {
		return nil, audit, err
	}
	// The rooms of the need just written (none for no need).
	if err := q.BookingResourcesLock(ctx, db.BookingResourcesLockParams{ClinicID: clinicID, AppointmentTypeID: typeID}); err != nil {
		return nil, audit, err
	}
	released, err := q.TypeBookingsReleaseRooms(ctx, db.TypeBookingsReleaseRoomsParams{ClinicID: clinicID, AppointmentTypeID: typeID, FromTime: from})
	if err != nil {
		return nil, audit, err
	}
	audit.Released = int(released)
	if audit.Need.None() {
		return nil, audit, nil
	}
	rows, err := q.TypeBookingsWithoutRoom(ctx, db.TypeBookingsWithoutRoomParams{ClinicID: clinicID, AppointmentTypeID: typeID, FromTime: from})
	if err != nil {
		return nil, audit, err
	}
	var left []Roomless
	for _, r := range rows {
		got, err := q.BookingTakeFreeRoom(ctx, db.BookingTakeFreeRoomParams{ClinicID: clinicID, ID: r.ID})
		if err != nil {
			return nil, audit, err
		}
		if got.Valid {
			audit.Given++
			continue
		}
		left = append(left, Roomless{ID: r.ID, Start: r.SlotStart, End: r.SlotEnd, SpecialistName: r.SpecialistName})
	}
	audit.Roomless = len(left)
	return left, audit, nil
}
