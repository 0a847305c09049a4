package practice

// Rooms and devices ("resources"): what a type may need besides its
// specialist, their weekly hours and closures, and what each type needs.
// Viewing takes ActSpecialists, adding and editing ActSpecialistsEdit,
// hours ActHours and closures ActClosures, as for specialists.

import (
	"context"
	"errors"
	"regexp"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/textfield"
)

// Room is a room or device of the clinic.
type Room struct {
	ID         uuid.UUID
	Name, Kind string
	AlwaysOpen bool
	Active     bool
	Version    int32
}

func roomFromRow(r db.Resource) Room {
	return Room{ID: r.ID, Name: r.Name, Kind: r.Kind, AlwaysOpen: r.AlwaysOpen, Active: r.Active, Version: r.Version}
}

// RoomInput is the room form, with the room's version its editor saw.
type RoomInput struct {
	Name, Kind string
	AlwaysOpen bool
	Active     bool
	Version    int32
}

var kindPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

func (in *RoomInput) validate() error {
	var err error
	if in.Name, err = textfield.RoomName.Check(in.Name); err != nil {
		return err
	}
	if in.Name == "" {
		return apperr.Invalidf("name", "A room needs a name.")
	}
	if !kindPattern.MatchString(in.Kind) {
		return apperr.Invalidf("kind", "The kind is one word of small letters, digits and hyphens, like ultrasound or treatment-room.")
	}
	return nil
}

// Rooms lists the clinic's rooms and devices, by kind and name.
//
// Errors: FORBIDDEN.
func (s *Service) Rooms(ctx context.Context, u staff.User) ([]Room, error) {
	if err := u.May(staff.ActSpecialists); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).ResourceList(ctx, u.ClinicID)
	return staff.FromRows(rows, err, roomFromRow)
}

// Room is one of the clinic's rooms.
//
// Errors: FORBIDDEN, NOT_FOUND (also for another clinic's).
func (s *Service) Room(ctx context.Context, u staff.User, id uuid.UUID) (Room, error) {
	if err := u.May(staff.ActSpecialists); err != nil {
		return Room{}, err
	}
	r, err := db.New(s.pool).ResourceGet(ctx, db.ResourceGetParams{ClinicID: u.ClinicID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Room{}, staff.NotFound("room")
	}
	return roomFromRow(r), err
}

// CreateRoom adds a room (ActSpecialistsEdit).
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (name, kind; a name the clinic
// already has).
func (s *Service) CreateRoom(ctx context.Context, u staff.User, in RoomInput) (Room, error) {
	if err := u.May(staff.ActSpecialistsEdit); err != nil {
		return Room{}, err
	}
	if err := in.validate(); err != nil {
		return Room{}, err
	}
	var r db.Resource
	err := s.tx(ctx, u, func(q *db.Queries) error {
		var err error
		r, err = q.ResourceInsert(ctx, db.ResourceInsertParams{ClinicID: u.ClinicID, Name: in.Name, Kind: in.Kind, AlwaysOpen: in.AlwaysOpen, Active: in.Active})
		if isSQLState(err, "23505") {
			return apperr.Invalidf("name", "There is a room of that name already.")
		}
		if err != nil {
			return err
		}
		return staff.WriteAudit(ctx, q, u, "room.create", "room", r.ID.String(), nil, roomFromRow(r), "")
	})
	return roomFromRow(r), err
}

// UpdateRoom edits a room (ActSpecialistsEdit) as in.Version of it: of
// two staff saving one room at once, one wins and the other is told. An
// inactive room takes no new bookings; those it has stay.
//
// Errors: FORBIDDEN, NOT_FOUND, INVALID_ARGUMENT (name, kind), CONCURRENCY_CONFLICT.
func (s *Service) UpdateRoom(ctx context.Context, u staff.User, id uuid.UUID, in RoomInput) (Room, error) {
	if err := u.May(staff.ActSpecialistsEdit); err != nil {
		return Room{}, err
	}
	if err := in.validate(); err != nil {
		return Room{}, err
	}
	var r db.Resource
	err := s.tx(ctx, u, func(q *db.Queries) error {
		// Locked first: a save refused because another won reports the
		// winner's values.
		old, err := q.ResourceLock(ctx, db.ResourceLockParams{ClinicID: u.ClinicID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return staff.NotFound("room")
		}
		if err != nil {
			return err
		}
		r, err = q.ResourceUpdate(ctx, db.ResourceUpdateParams{ClinicID: u.ClinicID, ID: id, Version: in.Version, Name: in.Name, Kind: in.Kind, AlwaysOpen: in.AlwaysOpen, Active: in.Active})
		if errors.Is(err, pgx.ErrNoRows) {
			return staff.Stale(roomFromRow(old))
		}
		if isSQLState(err, "23505") {
			return apperr.Invalidf("name", "There is a room of that name already.")
		}
		if err != nil {
			return err
		}
		return staff.WriteAudit(ctx, q, u, "room.update", "room", id.String(), roomFromRow(old), roomFromRow(r), "")
	})
	return roomFromRow(r), err
}

// RoomHours are a room's weekly ranges (used unless it is always open).
//
// Errors: FORBIDDEN.
func (s *Service) RoomHours(ctx context.Context, u staff.User, id uuid.UUID) ([]Range, error) {
	if err := u.May(staff.ActSpecialists); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).ResourceHoursList(ctx, db.ResourceHoursListParams{ClinicID: u.ClinicID, ResourceID: id})
	return staff.FromRows(rows, err, func(r db.ResourceHoursListRow) Range {
		return Range{Weekday: time.Weekday(r.Weekday), StartMin: int(r.StartMin), EndMin: int(r.EndMin)}
	})
}

// SetRoomHours replaces a room's weekly hours (ActHours) as version of the
// room: the hours share the room's version with its details.
//
// Errors: FORBIDDEN, NOT_FOUND, INVALID_ARGUMENT (hours.<weekday>), CONCURRENCY_CONFLICT.
func (s *Service) SetRoomHours(ctx context.Context, u staff.User, id uuid.UUID, version int32, rs []Range) error {
	if err := u.May(staff.ActHours); err != nil {
		return err
	}
	if err := ValidateRanges(rs); err != nil {
		return err
	}
	return s.tx(ctx, u, func(q *db.Queries) error {
		old, err := q.ResourceLock(ctx, db.ResourceLockParams{ClinicID: u.ClinicID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return staff.NotFound("room")
		} else if err != nil {
			return err
		}
		if _, err := q.ResourceBumpVersion(ctx, db.ResourceBumpVersionParams{ClinicID: u.ClinicID, ID: id, Version: version}); errors.Is(err, pgx.ErrNoRows) {
			return staff.Stale(roomFromRow(old))
		} else if err != nil {
			return err
		}
		if err := q.ResourceHoursDelete(ctx, db.ResourceHoursDeleteParams{ClinicID: u.ClinicID, ResourceID: id}); err != nil {
			return err
		}
		for _, r := range rs {
			if err := q.ResourceHoursInsert(ctx, db.ResourceHoursInsertParams{
				ClinicID: u.ClinicID, ResourceID: id, Weekday: int16(r.Weekday), StartMin: int32(r.StartMin), EndMin: int32(r.EndMin),
			}); err != nil {
				return err
			}
		}
		return staff.WriteAudit(ctx, q, u, "room.hours", "room", id.String(), nil, rs, "")
	})
}

// RoomClosure is a run of dates a room takes no bookings on.
type RoomClosure struct {
	ID          int64
	First, Last time.Time // local dates, as midnight UTC
	Note        string
}

// RoomClosures are a room's closures that end on or after fromDay.
//
// Errors: FORBIDDEN.
func (s *Service) RoomClosures(ctx context.Context, u staff.User, id uuid.UUID, fromDay time.Time) ([]RoomClosure, error) {
	if err := u.May(staff.ActClosures); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).ResourceClosureList(ctx, db.ResourceClosureListParams{ClinicID: u.ClinicID, ResourceID: id, FromDay: fromDay})
	return staff.FromRows(rows, err, func(r db.ResourceClosureListRow) RoomClosure {
		return RoomClosure{ID: r.ID, First: r.FirstDay, Last: r.LastDay, Note: r.Note}
	})
}

// AddRoomClosure closes a room over a run of dates (ActClosures).
//
// Errors: FORBIDDEN, NOT_FOUND, INVALID_ARGUMENT (first, last, note).
func (s *Service) AddRoomClosure(ctx context.Context, u staff.User, id uuid.UUID, in RoomClosure) error {
	if err := u.May(staff.ActClosures); err != nil {
		return err
	}
	var err error
	if in.Note, err = textfield.Note.Check(in.Note); err != nil {
		return err
	}
	switch {
	case in.First.IsZero():
		return apperr.Invalidf("first", "Pick the first closed date.")
	case in.Last.IsZero():
		in.Last = in.First
	}
	if in.Last.Before(in.First) || in.Last.Sub(in.First) >= 366*24*time.Hour {
		return apperr.Invalidf("last", "The last date is on or after the first, within a year of it.")
	}
	return s.tx(ctx, u, func(q *db.Queries) error {
		if _, err := q.ResourceGet(ctx, db.ResourceGetParams{ClinicID: u.ClinicID, ID: id}); errors.Is(err, pgx.ErrNoRows) {
			return staff.NotFound("room")
		} else if err != nil {
			return err
		}
		cid, err := q.ResourceClosureInsert(ctx, db.ResourceClosureInsertParams{ClinicID: u.ClinicID, ResourceID: id, FirstDay: in.First, LastDay: in.Last, Note: in.Note})
		if err != nil {
			return err
		}
		in.ID = cid
		return staff.WriteAudit(ctx, q, u, "room.closure.create", "room", id.String(), nil, in, "")
	})
}

// RoomClosureBookings are the confirmed bookings holding the room on the
// dates of its closures that end on or after fromDay, by closure, soonest
// first: a closure does not move them (as a specialist's does not), staff
// do, and a move gives the booking another room or none at the closed
// room's dates.
//
// Errors: FORBIDDEN.
func (s *Service) RoomClosureBookings(ctx context.Context, u staff.User, id uuid.UUID, fromDay time.Time) (map[int64][]AffectedBooking, error) {
	if err := u.May(staff.ActClosures); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).RoomClosureBookings(ctx, db.RoomClosureBookingsParams{ClinicID: u.ClinicID, ResourceID: id, FromDay: fromDay})
	if err != nil {
		return nil, err
	}
	out := map[int64][]AffectedBooking{}
	for _, r := range rows {
		out[r.ClosureID] = append(out[r.ClosureID], AffectedBooking{
			ID: r.ID, SpecialistID: r.SpecialistID, SpecialistName: r.SpecialistName, TypeName: r.TypeName,
			PatientName: r.PatientName, Email: r.PatientEmail, Phone: r.PatientPhone,
			Start: r.SlotStart, End: r.SlotEnd, Version: r.Version,
		})
	}
	return out, nil
}

// DeleteRoomClosure reopens a room's closure (ActClosures).
//
// Errors: FORBIDDEN, NOT_FOUND.
func (s *Service) DeleteRoomClosure(ctx context.Context, u staff.User, id uuid.UUID, closureID int64) error {
	if err := u.May(staff.ActClosures); err != nil {
		return err
	}
	return s.tx(ctx, u, func(q *db.Queries) error {
		n, err := q.ResourceClosureDelete(ctx, db.ResourceClosureDeleteParams{ClinicID: u.ClinicID, ResourceID: id, ID: closureID})
		if err != nil {
			return err
		}
		if n == 0 {
			return staff.NotFound("closure")
		}
		return staff.WriteAudit(ctx, q, u, "room.closure.delete", "room", id.String(), closureID, nil, "")
	})
}
