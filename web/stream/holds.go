package stream

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/events"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/web/httpx"
)

const (
	defaultLease = 15 * time.Minute
	maxLease     = time.Hour
	pingEvery    = 15 * time.Second
	streamBuffer = 256
)

// streamEvent is an event as a browser sees it: never a client id, never
// patient data; isOwnHold tells the viewer's holds from others'.
type streamEvent struct {
	Type              string    `json:"type"`
	HoldID            string    `json:"holdId,omitempty"`
	AppointmentTypeID uuid.UUID `json:"appointmentTypeId,omitzero"`
	SpecialistID      uuid.UUID `json:"specialistId,omitzero"`
	SlotStartDate     string    `json:"slotStartDate,omitempty"`
	SlotEndDate       string    `json:"slotEndDate,omitempty"`
	HoldExpiresAt     string    `json:"holdExpiresAt,omitempty"`
	Reason            string    `json:"reason,omitempty"`
	IsOwnHold         bool      `json:"isOwnHold"`
}

func toStreamEvent(ev holds.Event, ownHash string) streamEvent {
	se := streamEvent{
		Type: ev.Type, HoldID: ev.HoldID, AppointmentTypeID: ev.AppointmentTypeID, SpecialistID: ev.SpecialistID,
		Reason: ev.Reason, IsOwnHold: ev.ClientHash != "" && ev.ClientHash == ownHash,
	}
	if !ev.Start.IsZero() {
		se.SlotStartDate = ev.Start.UTC().Format(time.RFC3339)
	}
	if !ev.End.IsZero() {
		se.SlotEndDate = ev.End.UTC().Format(time.RFC3339)
	}
	if !ev.ExpiresAt.IsZero() {
		se.HoldExpiresAt = ev.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	return se
}

// HoldStream answers GET /v1/holds/stream?appointmentTypeId=&clientId=&leaseMs=:
// the JSON event stream an API client keeps open while it holds a slot.
func (s *Live) HoldStream(c echo.Context) error {
	ctx := c.Request().Context()
	typeID, clientID, lease, err := holdStreamParams(c)
	if err != nil {
		return err
	}
	clinicID, err := s.deps.Slots.ClinicOfType(ctx, typeID)
	if err != nil {
		return err
	}
	counted, err := s.perAddress.take(c.RealIP())
	if err != nil {
		return err
	}
	defer counted()
	hc := &holdStreamConn{
		s: s, c: c, ctx: ctx, typeID: typeID, clinicID: clinicID, lease: lease,
		own: holds.ClientHash(clientID), reason: events.ReasonClientAbort,
	}

	scope := typeID.String()
	m := s.deps.StreamMetrics
	m.StreamOpened("json", scope)
	defer func() { m.StreamEnded("json", scope, hc.reason) }()

	s.waitForEvents(ctx)
	// Subscribe before the snapshot: an event in between arrives twice
	// rather than never.
	hc.sub = s.deps.Hub.Subscribe(ctx, []string{events.TypeKey(typeID)}, clientID, streamBuffer)
	defer s.deps.Hub.Unsubscribe(hc.sub)
	hc.w = startSSE(c)
	if hc.open() {
		hc.forwardUntilEnd()
	}
	return nil
}

// holdStreamParams reads the stream's query: the appointment type, the
// client, and the lease (defaultLease unless leaseMs says otherwise).
func holdStreamParams(c echo.Context) (typeID uuid.UUID, clientID string, lease time.Duration, err error) {
	typeID, err = httpx.UUIDParam(c.QueryParam("appointmentTypeId"), "appointmentTypeId")
	if err != nil {
		return uuid.Nil, "", 0, err
	}
	clientID = c.QueryParam("clientId")
	if err := checkout.ValidateClientID(clientID); err != nil {
		return uuid.Nil, "", 0, err
	}
	lease = defaultLease
	if v := c.QueryParam("leaseMs"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 100 || time.Duration(ms)*time.Millisecond > maxLease {
			return uuid.Nil, "", 0, apperr.Invalidf("leaseMs", "leaseMs must be a whole number of milliseconds from 100 to %d.", maxLease.Milliseconds())
		}
		lease = time.Duration(ms) * time.Millisecond
	}
	return typeID, clientID, lease, nil
}

// holdStreamConn is one open hold stream: the hub subscription it
// forwards, the client it is for, and why it ended.
type holdStreamConn struct {
	s        *Live
	c        echo.Context
	ctx      context.Context // the request's: done when the client goes
	typeID   uuid.UUID
	clinicID uuid.UUID
	lease    time.Duration
	own      string // the client's hash: its holds are sent with isOwnHold
	sub      *events.Sub
	w        *sseWriter
	// reason is why the stream ended, for the metrics: the client's
	// leaving until something else is known.
	reason string
}

// send writes one event, v as JSON.
func (hc *holdStreamConn) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return hc.w.data(b)
}

// end records why the stream ends and tells the client, as its last event.
func (hc *holdStreamConn) end(reason string) {
	hc.reason = reason
	_ = hc.send(map[string]string{"type": "end", "reason": reason})
}

// writeFailed records why a write of the open stream failed: the client
// left, or it stopped reading (its write deadline passed).
func (hc *holdStreamConn) writeFailed() {
	if hc.ctx.Err() != nil {
		hc.reason = events.ReasonClientAbort
	} else {
		hc.reason = events.ReasonSendFailed
	}
}

// typeHolds reads the live holds of the stream's appointment type.
func (hc *holdStreamConn) typeHolds() ([]holds.Hold, error) {
	active, err := hc.s.deps.Holds.Active(hc.ctx, hc.clinicID)
	if err != nil {
		return nil, err
	}
	out := active[:0]
	for _, h := range active {
		if h.AppointmentTypeID == hc.typeID {
			out = append(out, h)
		}
	}
	return out, nil
}

// sendHolds sends a hold event for each of hs.
func (hc *holdStreamConn) sendHolds(hs []holds.Hold) error {
	for _, h := range hs {
		ev := holds.Event{Type: holds.EventHold, Hold: h, ClientHash: holds.ClientHash(h.ClientID)}
		if err := hc.send(toStreamEvent(ev, hc.own)); err != nil {
			return err
		}
	}
	return nil
}

// open starts the stream: the reconnection delay, init, a hold event for
// each live hold of the type (the snapshot), then connected. It reports
// whether the stream goes on; if not, hc.reason says why.
func (hc *holdStreamConn) open() bool {
	if err := hc.w.retry(5000); err != nil {
		hc.reason = events.ReasonSendFailed
		return false
	}
	initEv := map[string]any{"type": "init", "connectionId": hc.sub.ConnID(), "appointmentTypeId": hc.typeID, "leaseMs": hc.lease.Milliseconds()}
	if err := hc.send(initEv); err != nil {
		hc.reason = events.ReasonSendFailed
		return false
	}
	snap, err := hc.typeHolds()
	if err != nil {
		httpx.LoggerFrom(hc.c).Warn("hold stream snapshot", "err", err)
		hc.end(events.ReasonInitFailed)
		return false
	}
	err = hc.sendHolds(snap)
	if err == nil {
		err = hc.send(map[string]string{"type": "connected", "connectionId": hc.sub.ConnID()})
	}
	if err != nil {
		hc.reason = events.ReasonSendFailed
		return false
	}
	return true
}

// forwardUntilEnd sends the subscription's events, and a ping every
// pingEvery, until the client leaves, the hub ends the subscription
// (replaced, server shutdown), the lease runs out or a write fails.
func (hc *holdStreamConn) forwardUntilEnd() {
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	leaseEnd := time.NewTimer(hc.lease)
	defer leaseEnd.Stop()
	for {
		select {
		case <-hc.ctx.Done():
			hc.reason = events.ReasonClientAbort
			return
		case <-hc.sub.Done():
			hc.end(hc.sub.Reason())
			return
		case <-leaseEnd.C:
			hc.end(events.ReasonLeaseExpired)
			return
		case <-ping.C:
			if err := hc.send(map[string]string{"type": "ping"}); err != nil {
				hc.writeFailed()
				return
			}
		case it := <-hc.sub.C:
			if !hc.forward(it) {
				return
			}
		}
	}
}

// forward sends one item of the subscription and reports whether the
// stream goes on.
func (hc *holdStreamConn) forward(it events.Item) bool {
	var err error
	switch {
	case it.Resync:
		return hc.resync()
	case it.Event.Type == holds.EventHeartbeat && it.Event.ClientHash != hc.own:
		// Heartbeats go to their owner only.
	default:
		err = hc.send(toStreamEvent(*it.Event, hc.own))
	}
	if err != nil {
		hc.writeFailed()
		return false
	}
	return true
}

// resync follows a gap in the subscription: events were lost while Redis
// was away, so it says so, then resends the holds as they are now. It
// reports whether the stream goes on.
func (hc *holdStreamConn) resync() bool {
	// The subscription can be back a moment before the command pool
	// reconnects: retry the snapshot for a few seconds.
	var hs []holds.Hold
	err := retryFor(hc.ctx, resyncRetry, func() (e error) { hs, e = hc.typeHolds(); return e })
	if err != nil && hc.ctx.Err() == nil {
		httpx.LoggerFrom(hc.c).Warn("hold stream resync snapshot", "err", err)
		hc.end(events.ReasonInitFailed)
		return false
	}
	if err == nil {
		err = hc.send(map[string]string{"type": "resync"})
	}
	if err == nil {
		err = hc.sendHolds(hs)
	}
	if err != nil {
		hc.writeFailed()
		return false
	}
	return true
}

// resyncRetry is how long a stream keeps trying to read the state again
// after Redis came back.
const resyncRetry = 5 * time.Second

// retryFor calls f until it succeeds, ctx ends or d has passed.
func retryFor(ctx context.Context, d time.Duration, f func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
