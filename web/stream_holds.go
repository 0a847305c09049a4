package web

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

// holdStream answers GET /v1/holds/stream?appointmentTypeId=&clientId=&leaseMs=:
// the JSON event stream an API client keeps open while it holds a slot.
func (s *Server) holdStream(c echo.Context) error {
	ctx := c.Request().Context()
	typeID, err := uuidParam(c.QueryParam("appointmentTypeId"), "appointmentTypeId")
	if err != nil {
		return err
	}
	clientID := c.QueryParam("clientId")
	if err := checkout.ValidateClientID(clientID); err != nil {
		return err
	}
	lease := defaultLease
	if v := c.QueryParam("leaseMs"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 100 || time.Duration(ms)*time.Millisecond > maxLease {
			return apperr.Invalidf("leaseMs", "leaseMs must be a whole number of milliseconds from 100 to %d.", maxLease.Milliseconds())
		}
		lease = time.Duration(ms) * time.Millisecond
	}
	clinicID, err := s.deps.Slots.ClinicOfType(ctx, typeID)
	if err != nil {
		return err
	}

	scope := typeID.String()
	m := s.deps.StreamMetrics
	m.StreamOpened("json", scope)
	reason := events.ReasonClientAbort
	defer func() { m.StreamEnded("json", scope, reason) }()

	s.waitForEvents(ctx)
	// Subscribe before the snapshot: an event in between arrives twice
	// rather than never.
	sub := s.deps.Hub.Subscribe(ctx, []string{events.TypeKey(typeID)}, clientID, streamBuffer)
	defer s.deps.Hub.Unsubscribe(sub)
	own := holds.ClientHash(clientID)
	w := startSSE(c)
	send := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return w.data(b)
	}
	end := func(r string) {
		reason = r
		_ = send(map[string]string{"type": "end", "reason": r})
	}
	ownHolds := func() ([]holds.Hold, error) {
		active, err := s.deps.Holds.Active(ctx, clinicID)
		if err != nil {
			return nil, err
		}
		out := active[:0]
		for _, h := range active {
			if h.AppointmentTypeID == typeID {
				out = append(out, h)
			}
		}
		return out, nil
	}
	sendHolds := func(hs []holds.Hold) error {
		for _, h := range hs {
			if err := send(toStreamEvent(holds.Event{Type: holds.EventHold, Hold: h, ClientHash: holds.ClientHash(h.ClientID)}, own)); err != nil {
				return err
			}
		}
		return nil
	}

	if err := w.retry(5000); err != nil {
		reason = events.ReasonSendFailed
		return nil
	}
	if err := send(map[string]any{"type": "init", "connectionId": sub.ConnID(), "appointmentTypeId": typeID, "leaseMs": lease.Milliseconds()}); err != nil {
		reason = events.ReasonSendFailed
		return nil
	}
	snap, err := ownHolds()
	if err != nil {
		loggerFrom(c).Warn("hold stream snapshot", "err", err)
		end(events.ReasonInitFailed)
		return nil
	}
	if err := sendHolds(snap); err != nil {
		reason = events.ReasonSendFailed
		return nil
	}
	if err := send(map[string]string{"type": "connected", "connectionId": sub.ConnID()}); err != nil {
		reason = events.ReasonSendFailed
		return nil
	}

	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	leaseEnd := time.NewTimer(lease)
	defer leaseEnd.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			reason = events.ReasonClientAbort
			return nil
		case <-sub.Done():
			end(sub.Reason())
			return nil
		case <-leaseEnd.C:
			end(events.ReasonLeaseExpired)
			return nil
		case <-ping.C:
			err = send(map[string]string{"type": "ping"})
		case it := <-sub.C:
			switch {
			case it.Resync:
				// Events were lost while Redis was away: say so, then
				// resend the holds as they are now.
				// The subscription can be back a moment before the command
				// pool reconnects: retry the snapshot for a few seconds.
				var hs []holds.Hold
				if err = retryFor(ctx, resyncRetry, func() (e error) { hs, e = ownHolds(); return e }); err == nil {
					if err = send(map[string]string{"type": "resync"}); err == nil {
						err = sendHolds(hs)
					}
				} else if ctx.Err() == nil {
					loggerFrom(c).Warn("hold stream resync snapshot", "err", err)
					end(events.ReasonInitFailed)
					return nil
				}
			case it.Event.Type == holds.EventHeartbeat && it.Event.ClientHash != own:
				// Heartbeats go to their owner only.
			default:
				err = send(toStreamEvent(*it.Event, own))
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				reason = events.ReasonClientAbort
			} else {
				reason = events.ReasonSendFailed
			}
			return nil
		}
	}
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
