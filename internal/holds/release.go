package holds

// Ending a hold: released by its owner, or consumed by its booking.

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Release deletes the client's live hold and reports whether it did. An
// unknown, expired or already released hold is (false, nil): release is
// idempotent, and an expired hold is announced by the sweeper. Another
// client's live hold: ErrNotOwner, and the hold stays. Publishes "release"
// (reason "released"), in the step that deletes it, only when something
// was released.
//
// A hold claimed from an address bars that address's network from its
// slot (specialist and start) until the hold's KeepUntil, the end of the
// life its claim gave it, in the same step: a claim meets a *ReclaimError
// until then, while other networks may claim the slot at once. Letting go
// and claiming again is thus no way to renew a hold's life. A hold that
// lapses early bars nothing (see SetReclaimCoolOff); Withdraw lets go of
// a hold without the bar.
func (s *Store) Release(ctx context.Context, holdID, clientID string) (bool, error) {
	return s.release(ctx, holdID, clientID, true)
}

// Withdraw is Release for a hold the server lets go of on its owner's
// behalf (a claim it could not complete, a time that closed under a
// confirm): announced the same way, but it bars nothing, since the owner
// did not choose to let it go.
func (s *Store) Withdraw(ctx context.Context, holdID, clientID string) (bool, error) {
	return s.release(ctx, holdID, clientID, false)
}

func (s *Store) release(ctx context.Context, holdID, clientID string, bar bool) (bool, error) {
	h, ok, err := s.lookup(ctx, holdID)
	if err != nil || !ok {
		return false, err
	}
	// The event is the hold as its payload in holds:meta reads; the script
	// releases only the hold of this id, so it is this one (its network
	// and KeepUntil name the bar: the first never changes, the second
	// only for the server's own holds, which have no network).
	msg, channels, err := eventMessage(Event{Type: EventRelease, Hold: h, Reason: ReasonReleased})
	if err != nil {
		return false, err
	}
	keys := h.scriptKeys()
	var until int64
	if bar && h.network != "" && !h.KeepUntil.IsZero() {
		keys = append(keys, reclaimKey(h.key(), h.network))
		until = h.KeepUntil.UnixMilli()
	}
	args := []any{holdID, clientID, s.now().UnixMilli(), until, string(msg)}
	for _, ch := range channels {
		args = append(args, ch)
	}
	res, err := releaseScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return false, fmt.Errorf("holds: release: %w", err)
	}
	if status(res) != "notowner" {
		s.known.forget(holdID)
	}
	switch status(res) {
	case "ok":
		return true, nil // the script published the event
	case "gone":
		return false, nil
	case "notowner":
		return false, ErrNotOwner
	default:
		return false, fmt.Errorf("holds: release: unexpected reply %q", status(res))
	}
}

// Consume removes a hold after its booking committed, with its index
// entries, whether or not the key has expired meanwhile. It publishes
// nothing (see ConsumeBooked).
func (s *Store) Consume(ctx context.Context, h Hold) error {
	return s.consume(ctx, h, nil, nil, nil)
}

// ConsumeBooked is Consume that also publishes the booking's event (type
// "confirm") in the same Redis step: one round trip, and no page sees the
// hold vanish without the booking that took its place. The event's hold
// is h, as the booking describes it.
func (s *Store) ConsumeBooked(ctx context.Context, h Hold) error {
	return s.ConsumeBookedCooling(ctx, h, uuid.Nil, 0)
}

// ConsumeBookedCooling is ConsumeBooked that also starts the client's
// cooldown for the type after bookingID, as SetCooldown does, in the same
// step. cooldown <= 0 starts none.
func (s *Store) ConsumeBookedCooling(ctx context.Context, h Hold, bookingID uuid.UUID, cooldown time.Duration) error {
	keys, args, err := s.consumeBookedCall(h, bookingID, cooldown)
	if err != nil {
		return err
	}
	return s.runConsume(ctx, keys, args)
}

// QueueConsumeBookedCooling is ConsumeBookedCooling queued on pipe, to be
// sent in one round trip with the commands queued before it, which Redis
// runs first. done, called once pipe was sent, reports its outcome; a
// script Redis no longer knew is run again then, after them.
func (s *Store) QueueConsumeBookedCooling(ctx context.Context, pipe redis.Pipeliner, h Hold, bookingID uuid.UUID, cooldown time.Duration) (done func() error) {
	keys, args, err := s.consumeBookedCall(h, bookingID, cooldown)
	if err != nil {
		return func() error { return err }
	}
	cmd := consumeScript.EvalSha(ctx, pipe, keys, args...)
	return func() error {
		err := cmd.Err()
		if redis.HasErrorPrefix(err, "NOSCRIPT") {
			return s.runConsume(ctx, keys, args)
		}
		if err != nil {
			return fmt.Errorf("holds: consume: %w", err)
		}
		return nil
	}
}

// consumeBookedCall is the consume script's keys and arguments for h
// spent by its booking, with its event and the cooldown it starts.
func (s *Store) consumeBookedCall(h Hold, bookingID uuid.UUID, cooldown time.Duration) ([]string, []any, error) {
	msg, channels, err := eventMessage(Event{Type: EventConfirm, Hold: h})
	if err != nil {
		return nil, nil, err
	}
	var cool *cooling
	if cooldown > 0 {
		cool = &cooling{bookingID: bookingID, d: max(cooldown, time.Millisecond)} // PX counts whole milliseconds
	}
	return s.consumeCall(h, msg, channels, cool)
}

// cooling is the cooldown a consumed hold's booking starts.
type cooling struct {
	bookingID uuid.UUID
	d         time.Duration
}

func (s *Store) consume(ctx context.Context, h Hold, msg []byte, channels []string, cool *cooling) error {
	keys, args, err := s.consumeCall(h, msg, channels, cool)
	if err != nil {
		return err
	}
	return s.runConsume(ctx, keys, args)
}

// consumeCall is the consume script's keys and arguments; the hold is
// forgotten by this process.
func (s *Store) consumeCall(h Hold, msg []byte, channels []string, cool *cooling) ([]string, []any, error) {
	if h.ClinicID == uuid.Nil || h.HoldID == "" {
		return nil, nil, fmt.Errorf("%w: consume needs the hold as Pin returned it", ErrInvalid)
	}
	keys := h.scriptKeys()
	args := []any{h.HoldID, string(msg), 0, ""}
	if cool != nil {
		if cool.bookingID == uuid.Nil || h.ClientID == "" || h.AppointmentTypeID == uuid.Nil {
			return nil, nil, fmt.Errorf("%w: a cooldown needs the booking, the client and the type", ErrInvalid)
		}
		keys = append(keys, cooldownKey(h.ClinicID, h.ClientID, h.AppointmentTypeID), cooldownReverseKey(h.ClinicID, cool.bookingID))
		args[2], args[3] = cool.d.Milliseconds(), cool.bookingID.String()
	}
	for _, ch := range channels {
		args = append(args, ch)
	}
	s.known.forget(h.HoldID)
	return keys, args, nil
}

func (s *Store) runConsume(ctx context.Context, keys []string, args []any) error {
	if err := consumeScript.Run(ctx, s.rdb, keys, args...).Err(); err != nil {
		return fmt.Errorf("holds: consume: %w", err)
	}
	return nil
}
