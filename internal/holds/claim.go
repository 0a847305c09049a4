package holds

// Claiming a slot: the one script that checks the quotas and overlaps and takes it.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/clientaddr"
)

// ClaimRequest asks for one slot with one specialist.
type ClaimRequest struct {
	ClientID                                  string
	ClinicID, AppointmentTypeID, SpecialistID uuid.UUID
	Start, End                                time.Time
	BufferBefore, BufferAfter                 time.Duration
	// Quota is the most live holds of this appointment type the client may
	// have. Values below 1 count as 1 (the schema's default), so a forgotten
	// field never means "unlimited".
	Quota int
	// Address is the client's IP address, which the hold also counts
	// against: at most AddressQuota live holds of the clinic per address
	// (an IPv6 address counts by its /64). An empty Address or a quota
	// below 1 means no address limit (internal callers). A hold claimed
	// with an address also gets the re-claim cool-off when it lapses (see
	// SetReclaimCoolOff), whatever the quota.
	Address      string
	AddressQuota int
	// Cooldown refuses the claim with a *CooldownError while the client's
	// booking cooldown for the type runs (see SetCooldown), checked in the
	// claim's own step.
	Cooldown bool
	// Life, for holds the server takes itself (a waitlist offer's), is how
	// long the hold lives from its claim, instead of the store's TTL;
	// heartbeats cannot carry it further (Keep can). 0: the store's TTL
	// and longest life.
	Life time.Duration
}

// Claim takes the slot for the client. Errors: ErrQuota, ErrAddressQuota,
// *HeldError (also errors.Is ErrHeld: the slot, or with the buffers an
// overlapping time of the same specialist, is another client's),
// *ReclaimError (also errors.Is ErrReclaimTooSoon: a hold on this slot
// claimed from the same network lapsed within the cool-off), *CooldownError
// (also errors.Is ErrCooldown; only with req.Cooldown), ErrInvalid,
// or a Redis error. Claiming a slot the client already holds returns that
// hold unchanged and no error (a re-click), and publishes nothing.
func (s *Store) Claim(ctx context.Context, req ClaimRequest) (Hold, error) {
	if err := req.validate(); err != nil {
		return Hold{}, err
	}
	now := s.now()
	ttl, keep := s.ttl, now.Add(s.maxLife)
	if req.Life > 0 {
		ttl, keep = req.Life, now.Add(req.Life)
	}
	exp := now.Add(ttl)
	network, _ := clientaddr.Network(req.Address) // validated; "" without an address
	h := Hold{
		HoldID:            newHoldID(req.ClinicID),
		ClientID:          req.ClientID,
		ClinicID:          req.ClinicID,
		AppointmentTypeID: req.AppointmentTypeID,
		SpecialistID:      req.SpecialistID,
		Start:             req.Start.UTC(),
		End:               req.End.UTC(),
		ExpiresAt:         msTime(exp.UnixMilli()),
		KeepUntil:         msTime(keep.UnixMilli()),
		BufferBefore:      req.BufferBefore,
		BufferAfter:       req.BufferAfter,
		network:           network,
	}
	payload, err := json.Marshal(h)
	if err != nil {
		return Hold{}, fmt.Errorf("holds: encode payload: %w", err)
	}

	msg, channels, err := eventMessage(Event{Type: EventHold, Hold: h})
	if err != nil {
		return Hold{}, err
	}
	keys := []string{h.key(), clientKey(req.ClinicID, req.ClientID), metaKey(req.ClinicID), expiryKey(req.ClinicID),
		specialistKey(req.ClinicID, req.SpecialistID), cooldownKey(req.ClinicID, req.ClientID, req.AppointmentTypeID)}
	if network != "" {
		keys = append(keys, addressKey(req.ClinicID, network), reclaimKey(h.key(), network))
	}
	occupiedEnd := h.End.Add(h.BufferAfter).UnixMilli()
	args := []any{now.UnixMilli(), ttl.Milliseconds(), exp.UnixMilli(), string(payload),
		h.HoldID, req.ClientID, req.AppointmentTypeID.String(), max(req.Quota, 1), string(msg),
		h.Start.Add(-h.BufferBefore).UnixMilli(), occupiedEnd, occupiedEnd + maxOccupied.Milliseconds(),
		max(req.AddressQuota, 0), (max(s.maxLife, req.Life) + maxPin).Milliseconds(),
		s.ReclaimCoolOff().Milliseconds(), network, h.Start.Format(time.RFC3339Nano), flag(req.Cooldown)}
	for _, ch := range channels {
		args = append(args, ch)
	}
	// The clinic is registered for the sweeper with the claim, ahead of it
	// in one pipeline: one Redis runs them in that order. (On a cluster the
	// set may live on another node and the two run side by side; either
	// way the registration is done long before the hold can expire, and a
	// registration that failed takes the hold back below.)
	pipe := s.rdb.Pipeline()
	reg := pipe.SAdd(ctx, clinicsKey, req.ClinicID.String())
	claim := claimScript.EvalSha(ctx, pipe, keys, args...)
	_, _ = pipe.Exec(ctx) // each command's error is its own
	if err := reg.Err(); err != nil {
		if st, _ := claim.Slice(); status(st) == "ok" {
			// Only if Redis refused the one write and took the other: take
			// the hold back (announced) rather than leave one the sweeper
			// never visits.
			_, _ = s.Release(context.WithoutCancel(ctx), h.HoldID, req.ClientID)
		}
		return Hold{}, fmt.Errorf("holds: register clinic: %w", err)
	}
	res, err := claim.Slice()
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		// Redis restarted and forgot the script: Run loads it.
		res, err = claimScript.Run(ctx, s.rdb, keys, args...).Slice()
	}
	if err != nil {
		return Hold{}, fmt.Errorf("holds: claim: %w", err)
	}
	return s.claimed(h, res)
}

// claimed reads the claim script's reply: h when it took the slot.
func (s *Store) claimed(h Hold, res []any) (Hold, error) {
	switch status(res) {
	case "ok":
		return h, nil // the script published the event
	case "own":
		return s.payloads.decode(str(res, 1))
	case "quota":
		return Hold{}, ErrQuota
	case "addrquota":
		return Hold{}, ErrAddressQuota
	case "reclaim":
		ms, _ := res[1].(int64)
		return Hold{}, &ReclaimError{RetryAfter: max(time.Duration(ms)*time.Millisecond, 0)}
	case "cooldown":
		ms, _ := res[1].(int64)
		return Hold{}, &CooldownError{RetryAfter: max(time.Duration(ms)*time.Millisecond, 0)}
	case "held":
		other, err := s.payloads.decode(str(res, 1))
		if err != nil {
			return Hold{}, err
		}
		pttl, _ := res[2].(int64)
		return Hold{}, &HeldError{RetryAfter: max(time.Duration(pttl)*time.Millisecond, 0), Hold: other}
	default:
		return Hold{}, fmt.Errorf("holds: claim: unexpected reply %v", res)
	}

}

func (r ClaimRequest) validate() error {
	switch {
	case r.ClientID == "" || len(r.ClientID) > maxClientIDLen:
		return fmt.Errorf("%w: client id must be 1-%d bytes", ErrInvalid, maxClientIDLen)
	case r.ClinicID == uuid.Nil || r.AppointmentTypeID == uuid.Nil || r.SpecialistID == uuid.Nil:
		return fmt.Errorf("%w: clinic, appointment type and specialist are required", ErrInvalid)
	case r.Start.IsZero() || !r.End.After(r.Start):
		return fmt.Errorf("%w: slot must end after it starts", ErrInvalid)
	case r.Life < 0 || r.Life > maxOccupied:
		return fmt.Errorf("%w: a hold lives less than %s", ErrInvalid, maxOccupied)
	case r.BufferBefore < 0 || r.BufferAfter < 0:
		return fmt.Errorf("%w: negative buffer", ErrInvalid)
	case r.End.Sub(r.Start)+r.BufferBefore+r.BufferAfter >= maxOccupied:
		return fmt.Errorf("%w: a hold occupies less than %s", ErrInvalid, maxOccupied)
	}
	if _, ok := clientaddr.Network(r.Address); r.Address != "" && !ok {
		return fmt.Errorf("%w: address %q is not an IP address", ErrInvalid, r.Address)
	}
	return nil
}

// flag is a boolean as scripts read it.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
