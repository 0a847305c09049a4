// Package grid computes what each cell of a slot grid shows to one viewer:
// free, held for you, held (by someone else), or taken. The booking page,
// its live stream and the kiosk all render from here, so a cell reads the
// same however it reached the browser.
package grid

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/slots"
)

// State of a cell.
type State string

const (
	Free  State = "free"
	Mine  State = "mine"  // held by the viewer
	Held  State = "held"  // held by someone else
	Taken State = "taken" // booked
)

// View is what a page shows: one type, one specialist or any, some days.
type View struct {
	AppointmentTypeID uuid.UUID
	SpecialistID      uuid.UUID // uuid.Nil: any specialist
	From, To          availability.Date
}

// Key identifies a view, for sharing one computation among its streams.
func (v View) Key() string {
	return fmt.Sprintf("%s|%s|%s|%s", v.AppointmentTypeID, v.SpecialistID, v.From, v.To)
}

// Cell is one slot position and its state for one viewer.
type Cell struct {
	ID         string // stable DOM id and SSE event name
	Start, End time.Time
	State      State
	HoldID     string    // Mine only
	ExpiresAt  time.Time // Mine only
	// KeepUntil (Mine only) is the end of the hold's life while its page
	// keeps it alive: the time its patient is told, which heartbeats do
	// not move.
	KeepUntil time.Time
}

// CellID is the DOM id of the cell at start in a view of specialist (or any).
func CellID(specialist uuid.UUID, start time.Time) string {
	who := "any"
	if specialist != uuid.Nil {
		who = specialist.String()[:8]
	}
	return fmt.Sprintf("slot-%s-%d", who, start.Unix())
}

// Service builds snapshots.
type Service struct {
	slots *slots.Service
	holds *holds.Store
}

func New(s *slots.Service, h *holds.Store) *Service { return &Service{slots: s, holds: h} }

// Snapshot is a view's state at one moment, before it is seen by anyone in
// particular. Cells personalises it.
type Snapshot struct {
	View      View
	ClinicID  uuid.UUID
	Zone      *time.Location
	Timezone  string
	typ       availability.AppointmentType
	positions []availability.Slot
	free      map[int64][]uuid.UUID // start (unix) -> specialists free of bookings
	// roomsFree: start (unix) -> the rooms free of bookings there, for a
	// type that needs one; a live hold of a room (of any type) takes it
	// out of every position its time overlaps.
	roomsFree map[int64][]uuid.UUID
	// holds is every live hold of the clinic, in the order
	// holds.Store.Active lists them; owners[i] names holds[i]'s owner as
	// events do (holds.ClientHash): a hold an event brought has no client
	// id, and its owner's cells are still their own.
	holds  []holds.Hold
	owners []string
	// rooms: the type needs a room, which any booking of the clinic may
	// take; a booking is then not applied but read again.
	rooms bool
}

// Snapshot reads a view's state: the grid (from hours), the free slots
// (from bookings) and the clinic's live holds. With Redis down the holds
// are unknown and the grid shows none.
func (s *Service) Snapshot(ctx context.Context, v View) (*Snapshot, error) {
	return s.snapshot(ctx, v, false)
}

// snapshot reads a view's state; live: fail when the holds cannot be read
// (see LiveSnapshot), else show none.
func (s *Service) snapshot(ctx context.Context, v View, live bool) (*Snapshot, error) {
	// The clinic's live holds are read with the cache's counters, in one
	// step, when the lists are read from the cache; else on their own.
	// Either way after the view's reading began (liveview.Store.Begin):
	// a hold that changes later is an event the view hears.
	var hs []holds.Hold
	holdsRead := false
	var read slots.CounterReader
	if s.holds != nil {
		read = func(ctx context.Context, clinicID uuid.UUID, keys []string) ([]string, error) {
			got, vals, err := s.holds.ActiveReading(ctx, clinicID, keys)
			hs, holdsRead = got, err == nil
			return vals, err
		}
	}
	rs, err := s.slots.FreeEachReading(ctx, read,
		slots.Request{AppointmentTypeID: v.AppointmentTypeID, SpecialistID: v.SpecialistID, From: v.From, To: v.To, NoBookings: true, NoHolds: true},
		slots.Request{AppointmentTypeID: v.AppointmentTypeID, SpecialistID: v.SpecialistID, From: v.From, To: v.To, NoHolds: true})
	if err != nil {
		return nil, err
	}
	grid, free := rs[0], rs[1]
	sn := &Snapshot{
		View: v, ClinicID: grid.ClinicID, Zone: grid.Location, Timezone: grid.Timezone,
		typ: grid.Type, positions: grid.Slots, free: make(map[int64][]uuid.UUID, len(free.Slots)),
		rooms: free.NeedsRoom,
	}
	for _, sl := range free.Slots {
		sn.free[sl.Start.Unix()] = sl.SpecialistIDs
		if len(sl.ResourceIDs) > 0 {
			if sn.roomsFree == nil {
				sn.roomsFree = make(map[int64][]uuid.UUID, len(free.Slots))
			}
			sn.roomsFree[sl.Start.Unix()] = sl.ResourceIDs
		}
	}
	if s.holds == nil {
		if live {
			return nil, fmt.Errorf("grid: no hold store")
		}
		return sn, nil
	}
	if !holdsRead {
		hs, err = s.holds.Active(ctx, grid.ClinicID)
		if err != nil {
			if live {
				return nil, fmt.Errorf("grid: live holds: %w", err)
			}
			return sn, nil
		}
	}
	sn.holds = hs
	sn.owners = make([]string, len(hs))
	for i, h := range hs {
		sn.owners[i] = holds.ClientHash(h.ClientID)
	}
	return sn, nil
}

// Personal reports whether clientID owns a live hold in the clinic: only
// then can its cells differ from the anonymous ones.
func (sn *Snapshot) Personal(clientID string) bool {
	return clientID != "" && sn.HeldBy(holds.ClientHash(clientID))
}

// HeldBy is Personal for the client whose hash (holds.ClientHash) is
// clientHash.
func (sn *Snapshot) HeldBy(clientHash string) bool {
	return clientHash != "" && slices.Contains(sn.owners, clientHash)
}

// Owner is the hash (holds.ClientHash) of the client who owns Holds()[i].
func (sn *Snapshot) Owner(i int) string {
	if i < len(sn.owners) {
		return sn.owners[i]
	}
	return ""
}

// Cells is every cell of the view as clientID sees it ("" for anyone).
func (sn *Snapshot) Cells(clientID string) []Cell {
	return sn.CellsOf(holds.ClientHash(clientID))
}

// CellsOf is Cells for the client whose hash is clientHash.
func (sn *Snapshot) CellsOf(clientHash string) []Cell {
	out := make([]Cell, len(sn.positions))
	for i, p := range sn.positions {
		out[i] = sn.cell(p, clientHash)
	}
	return out
}

func (sn *Snapshot) cell(p availability.Slot, clientHash string) Cell {
	c := Cell{ID: CellID(sn.View.SpecialistID, p.Start), Start: p.Start, End: p.End}
	free := sn.free[p.Start.Unix()]
	if len(free) == 0 {
		c.State = Taken
		return c
	}
	if clientHash != "" {
		for i, h := range sn.holds {
			if sn.Owner(i) == clientHash && h.AppointmentTypeID == sn.View.AppointmentTypeID && h.Start.Equal(p.Start) &&
				(sn.View.SpecialistID == uuid.Nil || h.SpecialistID == sn.View.SpecialistID) {
				c.State, c.HoldID, c.ExpiresAt, c.KeepUntil = Mine, h.HoldID, h.ExpiresAt, h.KeepUntil
				if c.KeepUntil.Before(h.ExpiresAt) { // kept past its life while a code is awaited
					c.KeepUntil = h.ExpiresAt
				}
				return c
			}
		}
	}
	c.State = Held
	if !sn.roomLeft(p) {
		return c
	}
	for _, sp := range free {
		if !sn.blocked(sp, p) {
			c.State = Free
			return c
		}
	}
	return c
}

// roomLeft: a room free of bookings at p is held by no live hold for an
// overlapping time (rooms have no buffers); true for a type that needs
// no room.
func (sn *Snapshot) roomLeft(p availability.Slot) bool {
	rooms, ok := sn.roomsFree[p.Start.Unix()]
	if !ok {
		return true
	}
	for _, r := range rooms {
		held := false
		for _, h := range sn.holds {
			if h.ResourceID == r && h.Start.Before(p.End) && p.Start.Before(h.End) {
				held = true
				break
			}
		}
		if !held {
			return true
		}
	}
	return false
}

// blocked: a live hold keeps the specialist from this slot, buffers included.
func (sn *Snapshot) blocked(sp uuid.UUID, p availability.Slot) bool {
	start, end := p.Start.Add(-sn.typ.BufferBefore), p.End.Add(sn.typ.BufferAfter)
	for _, h := range sn.holds {
		if h.SpecialistID == sp && h.Start.Add(-h.BufferBefore).Before(end) && start.Before(h.End.Add(h.BufferAfter)) {
			return true
		}
	}
	return false
}
