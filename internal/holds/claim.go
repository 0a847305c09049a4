package holds

// Claiming a slot: the one script that checks the quotas and overlaps and takes it.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/clientaddr"
	"github.com/clinic/booking/internal/ratelimit"
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
	// SetReclaimCoolOff) or is released (see Release), whatever the quota.
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
	// Watch are counters of the clinic (keys with its hash tag) that must
	// still read WatchValues ("" for a missing key), in order, for the
	// claim to go ahead: the caller chose the specialists from a list they
	// vouch for. Otherwise the claim is refused with ErrMoved.
	Watch, WatchValues []string
	// Rooms, for a type that needs a room or device, are the resources
	// that can serve the slot and are open and free of bookings then, in
	// the order to try them (the slot engine's, which is the gate's). The
	// hold takes the first that no other client's hold of an overlapping
	// time has, in the claim's step, with the specialist it takes; when
	// every one is held, the claim is refused as a held slot. None: the
	// type needs no room.
	Rooms []uuid.UUID
	// Counts are rate limits of the caller's (keys with the clinic's hash
	// tag), counted in the claim's own step, once the watched counters
	// stand: over one of them the claim is refused with a *LimitedError.
	// A claim refused before its step (ErrInvalid) is counted all the
	// same (Count).
	Counts []ratelimit.Counter
}

// Claim takes the slot for the client. Errors: ErrQuota, ErrAddressQuota,
// *HeldError (also errors.Is ErrHeld: the slot, or with the buffers an
// overlapping time of the same specialist, is another client's, or every
// one of req.Rooms is held for an overlapping time),
// *ReclaimError (also errors.Is ErrReclaimTooSoon: a hold on this slot
// claimed from the same network lapsed within the cool-off, or was
// released by its owner and would still live), *CooldownError
// (also errors.Is ErrCooldown; only with req.Cooldown), ErrInvalid,
// or a Redis error. Claiming a slot the client already holds returns that
// hold unchanged and no error (a re-click), and publishes nothing.
func (s *Store) Claim(ctx context.Context, req ClaimRequest) (Hold, error) {
	return s.ClaimAny(ctx, req, []uuid.UUID{req.SpecialistID})
}

// ClaimAny is Claim with the first of specialists, in their order, that
// can take the slot, all tried in one step (req.SpecialistID is ignored).
// When none can, the error is a *HeldError if another client's hold stands
// in the way of any of them (the one that lasts longest), else a
// *ReclaimError. With req.Rooms the hold is of a specialist and a room,
// chosen together: when every room is held the answer is a *HeldError
// naming the room's hold that lasts longest, whatever the specialists.
func (s *Store) ClaimAny(ctx context.Context, req ClaimRequest, specialists []uuid.UUID) (Hold, error) {
	if len(specialists) == 0 {
		return Hold{}, fmt.Errorf("%w: no specialist to claim with", ErrInvalid)
	}
	req.SpecialistID = specialists[0]
	if err := req.validate(); err != nil {
		return Hold{}, s.countRefused(ctx, req.Counts, err)
	}
	now := s.now()
	h, ttl := s.newHold(req, now)
	keys, args, err := s.claimArgs(req, h, ttl, now, specialists)
	if err != nil {
		return Hold{}, s.countRefused(ctx, req.Counts, err)
	}
	// A clinic this process has not registered for the sweeper within the
	// minute is registered ahead of the claim, in its round trip (one
	// Redis runs the two in that order), so no hold exists that the
	// sweeper does not visit, even if this process dies right after.
	ahead := !s.registeredRecently(req.ClinicID, now)
	res, reg, err := s.runClaim(ctx, req.ClinicID, ahead, keys, args)
	if err != nil {
		return Hold{}, fmt.Errorf("holds: claim: %w", err)
	}
	switch status(res) {
	case "ok":
	case "limited":
		return Hold{}, limited(res, req.Counts)
	default:
		return s.claimed(res)
	}
	c, _ := res[1].(int64)
	if c < 1 || int(c) > len(specialists) || len(res) < 4 {
		return Hold{}, fmt.Errorf("holds: claim: unexpected reply %q", status(res))
	}
	h.SpecialistID = specialists[c-1]
	if len(req.Rooms) > 0 {
		r, _ := res[3].(int64)
		if r < 1 || int(r) > len(req.Rooms) {
			return Hold{}, fmt.Errorf("holds: claim: unexpected room %d", r)
		}
		h.ResourceID = req.Rooms[r-1]
	}
	if err := s.registerClaimed(ctx, req, h, now, ahead, reg, res[2] == int64(1)); err != nil {
		return Hold{}, err
	}
	s.known.put(h)
	return h, nil // the script published the event
}

// newHold is the hold req would be, claimed at now (its specialist still
// to be chosen), and the time its key is to live.
func (s *Store) newHold(req ClaimRequest, now time.Time) (Hold, time.Duration) {
	ttl, keep := s.ttl, now.Add(s.maxLife)
	if req.Life > 0 {
		ttl, keep = req.Life, now.Add(req.Life)
	}
	exp := now.Add(ttl)
	network, _ := clientaddr.Network(req.Address) // validated; "" without an address
	return Hold{
		HoldID:            newHoldID(req.ClinicID),
		ClientID:          req.ClientID,
		ClinicID:          req.ClinicID,
		AppointmentTypeID: req.AppointmentTypeID,
		Start:             req.Start.UTC(),
		End:               req.End.UTC(),
		ExpiresAt:         msTime(exp.UnixMilli()),
		KeepUntil:         msTime(keep.UnixMilli()),
		BufferBefore:      req.BufferBefore,
		BufferAfter:       req.BufferAfter,
		network:           network,
	}, ttl
}

// claimArgs are claimScript's keys and arguments for claiming h with the
// first of specialists that can take it.
func (s *Store) claimArgs(req ClaimRequest, h Hold, ttl time.Duration, now time.Time, specialists []uuid.UUID) ([]string, []any, error) {
	network := h.network
	keys := []string{clientKey(req.ClinicID, req.ClientID), metaKey(req.ClinicID), expiryKey(req.ClinicID),
		cooldownKey(req.ClinicID, req.ClientID, req.AppointmentTypeID), addressKey(req.ClinicID, network), registeredKey(req.ClinicID)}
	occupiedEnd := h.End.Add(h.BufferAfter).UnixMilli()
	_, channels, err := eventMessage(Event{Type: EventHold, Hold: h})
	if err != nil {
		return nil, nil, err
	}
	args := []any{now.UnixMilli(), ttl.Milliseconds(), h.ExpiresAt.UnixMilli(),
		h.HoldID, req.ClientID, req.AppointmentTypeID.String(), max(req.Quota, 1),
		h.Start.Add(-h.BufferBefore).UnixMilli(), occupiedEnd, occupiedEnd + maxOccupied.Milliseconds(),
		max(req.AddressQuota, 0), (max(s.maxLife, req.Life) + maxPin).Milliseconds(),
		s.ReclaimCoolOff().Milliseconds(), network, h.Start.Format(time.RFC3339Nano), flag(req.Cooldown),
		len(specialists), len(channels), len(req.Rooms)}
	for _, ch := range channels {
		args = append(args, ch)
	}
	// The candidates' payloads and events differ in the specialist only:
	// each is the first one's with the id swapped, which saves encoding
	// them all under a rush.
	first := h
	first.SpecialistID = specialists[0]
	if len(req.Rooms) > 0 {
		first.ResourceID = req.Rooms[0]
	}
	payload, err := json.Marshal(first)
	if err != nil {
		return nil, nil, fmt.Errorf("holds: encode payload: %w", err)
	}
	msg, _, err := eventMessage(Event{Type: EventHold, Hold: first})
	if err != nil {
		return nil, nil, err
	}
	for _, id := range specialists {
		if id == uuid.Nil {
			return nil, nil, fmt.Errorf("%w: clinic, appointment type and specialist are required", ErrInvalid)
		}
		c := first
		c.SpecialistID = id
		keys = append(keys, c.key(), specialistKey(req.ClinicID, id), reclaimKey(c.key(), network))
		args = append(args, withSpecialist(payload, first.SpecialistID, id), withSpecialist(msg, first.SpecialistID, id))
	}
	// The rooms: the payloads and events name the first, which the
	// script swaps for the room it gives.
	args = append(args, h.Start.UnixMilli(), h.End.UnixMilli(), h.End.Add(maxOccupied).UnixMilli())
	for _, r := range req.Rooms {
		keys = append(keys, roomKey(req.ClinicID, r))
		args = append(args, r.String())
	}
	if len(req.Watch) != len(req.WatchValues) {
		return nil, nil, fmt.Errorf("%w: %d watched keys, %d values", ErrInvalid, len(req.Watch), len(req.WatchValues))
	}
	keys = append(keys, req.Watch...)
	for _, v := range req.WatchValues {
		args = append(args, v)
	}
	keys, args = withCounts(keys, args, req.Counts)
	return keys, args, nil
}

// runClaim runs claimScript, with the clinic's registration for the
// sweeper ahead of it in the same round trip when ahead (reg is then that
// command).
func (s *Store) runClaim(ctx context.Context, clinicID uuid.UUID, ahead bool, keys []string, args []any) (res []any, reg *redis.IntCmd, err error) {
	if !ahead {
		res, err = claimScript.Run(ctx, s.rdb, keys, args...).Slice()
		return res, nil, err
	}
	pipe := s.rdb.Pipeline()
	reg = pipe.SAdd(ctx, clinicsKey, clinicID.String())
	claim := claimScript.EvalSha(ctx, pipe, keys, args...)
	_, _ = pipe.Exec(ctx) // each command's error is its own
	res, err = claim.Slice()
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		// Redis restarted and forgot the script: Run loads it.
		res, err = claimScript.Run(ctx, s.rdb, keys, args...).Slice()
	}
	return res, reg, err
}

// registerClaimed makes sure the clinic of the claimed hold h is in the
// set the sweeper visits: registered ahead (reg), or marked already (the
// script found the clinic's mark), or added now. When it cannot be, the
// hold is taken back (announced) rather than left where the sweeper never
// visits it.
func (s *Store) registerClaimed(ctx context.Context, req ClaimRequest, h Hold, now time.Time, ahead bool, reg *redis.IntCmd, marked bool) error {
	var err error
	switch {
	case ahead:
		err = reg.Err()
	case !marked:
		// The clinic's mark was gone (a Redis that lost its data): the
		// set may be gone with it.
		err = s.rdb.SAdd(context.WithoutCancel(ctx), clinicsKey, req.ClinicID.String()).Err()
	}
	if err != nil {
		s.registered.Delete(req.ClinicID)
		_, _ = s.Withdraw(context.WithoutCancel(ctx), h.HoldID, req.ClientID)
		return fmt.Errorf("holds: register clinic: %w", err)
	}
	if ahead || !marked {
		s.registered.Store(req.ClinicID, now)
	}
	return nil
}

// withSpecialist is the encoded payload or event of a hold with specialist
// from, as it would be with specialist to. The field is matched with its
// name: no string value (a client id of the caller's choosing) can hold
// that text, as its quotes would be escaped.
func withSpecialist(encoded []byte, from, to uuid.UUID) string {
	if from == to {
		return string(encoded)
	}
	const field = `"specialistId":"`
	return strings.Replace(string(encoded), field+from.String()+`"`, field+to.String()+`"`, 1)
}

// registeredRecently reports whether this process put the clinic in the
// set the sweeper visits within registerEvery. The clinic is never taken
// out of the set, so a claim registers it only when this process has not
// (ahead of the claim, in its round trip) and when the claim finds the
// clinic's mark gone (a Redis that lost its data; after the claim); the
// other claims save the command.
func (s *Store) registeredRecently(clinicID uuid.UUID, now time.Time) bool {
	last, ok := s.registered.Load(clinicID)
	return ok && now.Sub(last.(time.Time)) < registerEvery
}

// registerEvery is how often a process registers a clinic again (see
// registeredRecently).
const registerEvery = time.Minute

// claimed reads a claim script's reply other than 'ok'.
func (s *Store) claimed(res []any) (Hold, error) {
	switch status(res) {
	case "moved":
		return Hold{}, ErrMoved
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
		return Hold{}, fmt.Errorf("holds: claim: unexpected reply %q", status(res))
	}
}

func (r ClaimRequest) validate() error {
	switch {
	case r.ClientID == "" || len(r.ClientID) > maxClientIDLen:
		return fmt.Errorf("%w: client id must be 1-%d bytes", ErrInvalid, maxClientIDLen)
	case r.ClinicID == uuid.Nil || r.AppointmentTypeID == uuid.Nil || r.SpecialistID == uuid.Nil:
		return fmt.Errorf("%w: clinic, appointment type and specialist are required", ErrInvalid)
	case len(r.Rooms) > maxRooms || slices.Contains(r.Rooms, uuid.Nil):
		return fmt.Errorf("%w: at most %d rooms, none nil", ErrInvalid, maxRooms)
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

// maxRooms bounds the rooms one claim tries: a clinic's rooms of a kind.
const maxRooms = 64

// flag is a boolean as scripts read it.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
