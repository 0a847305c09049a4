package holds

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clientaddr"
)

// DefaultTTL is a hold's life without heartbeats when NewStore is given none.
const DefaultTTL = 30 * time.Second

// DefaultMaxLife is how long heartbeats may keep a hold, from its claim,
// unless SetMaxLife says otherwise.
const DefaultMaxLife = 10 * time.Minute

// maxPin bounds a pin: past its KeepUntil a hold is pinned at most this
// long, so a confirm can finish its insert but a pin cannot keep a hold.
const maxPin = time.Minute

// maxOccupied is longer than any hold occupies with its buffers (a booking
// lasts at most a day): the claim reads the specialist index no further.
const maxOccupied = 48 * time.Hour

// maxClientIDLen bounds client ids, which become part of key names.
const maxClientIDLen = 200

// Store keeps holds in Redis. It is safe for concurrent use.
type Store struct {
	rdb     redis.UniversalClient
	ttl     time.Duration
	maxLife time.Duration
	coolOff time.Duration // 0: maxLife
	log     *slog.Logger
	// now is the clock every script is given; tests replace it.
	now func() time.Time

	// The sweeper's counters (see SweepStats).
	sweeps, swept, sweepErrors, lastSweep atomic.Int64

	payloads payloadCache
}

// NewStore returns a store whose holds live ttl (DefaultTTL if <= 0)
// without a heartbeat. A nil logger means slog.Default().
func NewStore(rdb redis.UniversalClient, ttl time.Duration, logger *slog.Logger) *Store {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Store{rdb: rdb, ttl: ttl, maxLife: DefaultMaxLife, log: logger, now: time.Now}
}

// SetMaxLife bounds how long heartbeats may keep a hold, counted from its
// claim (DefaultMaxLife if d <= 0; never below the TTL). Call it while
// wiring, before the store is used.
func (s *Store) SetMaxLife(d time.Duration) {
	if d <= 0 {
		d = DefaultMaxLife
	}
	s.maxLife = max(d, s.ttl)
}

// SetReclaimCoolOff sets how long, after a hold lapsed at the end of its
// longest life (its last heartbeat could only reach KeepUntil), no client
// from the network that claimed it may claim that slot again; other
// networks may at once. A hold that lapsed earlier bars nothing. d <= 0
// means the max life (the default): a hold cannot be renewed in place, and
// a patient who kept one to its end waits that long for that one slot
// only. Call it while wiring, before the store is used.
func (s *Store) SetReclaimCoolOff(d time.Duration) { s.coolOff = max(d, 0) }

// ReclaimCoolOff is the re-claim cool-off (see SetReclaimCoolOff).
func (s *Store) ReclaimCoolOff() time.Duration {
	if s.coolOff > 0 {
		return s.coolOff
	}
	return s.maxLife
}

// TTL is a hold's life without heartbeats.
func (s *Store) TTL() time.Duration { return s.ttl }

// MaxLife is the longest heartbeats keep a hold, from its claim.
func (s *Store) MaxLife() time.Duration { return s.maxLife }

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
}

// Claim takes the slot for the client. Errors: ErrQuota, ErrAddressQuota,
// *HeldError (also errors.Is ErrHeld: the slot, or with the buffers an
// overlapping time of the same specialist, is another client's),
// *ReclaimError (also errors.Is ErrReclaimTooSoon: a hold on this slot
// claimed from the same network lapsed within the cool-off), ErrInvalid,
// or a Redis error. Claiming a slot the client already holds returns that
// hold unchanged and no error (a re-click), and publishes nothing.
func (s *Store) Claim(ctx context.Context, req ClaimRequest) (Hold, error) {
	if err := req.validate(); err != nil {
		return Hold{}, err
	}
	now := s.now()
	exp := now.Add(s.ttl)
	keep := now.Add(s.maxLife)
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
		specialistKey(req.ClinicID, req.SpecialistID)}
	if network != "" {
		keys = append(keys, addressKey(req.ClinicID, network), reclaimKey(h.key(), network))
	}
	occupiedEnd := h.End.Add(h.BufferAfter).UnixMilli()
	args := []any{now.UnixMilli(), s.ttl.Milliseconds(), exp.UnixMilli(), string(payload),
		h.HoldID, req.ClientID, req.AppointmentTypeID.String(), max(req.Quota, 1), string(msg),
		h.Start.Add(-h.BufferBefore).UnixMilli(), occupiedEnd, occupiedEnd + maxOccupied.Milliseconds(),
		max(req.AddressQuota, 0), (s.maxLife + maxPin).Milliseconds(),
		s.ReclaimCoolOff().Milliseconds(), network, h.Start.Format(time.RFC3339Nano)}
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

// Heartbeat extends the client's hold to a full TTL from now, but never
// past its KeepUntil (a hold without one, written before it existed, is
// at it), and returns it. A hold that expired, never existed,
// is another client's or has reached its KeepUntil: ErrGone (the caller
// cannot tell them apart, and need not). A hold kept to its KeepUntil then
// lapses like any other, and the sweeper announces it as expired.
func (s *Store) Heartbeat(ctx context.Context, holdID, clientID string) (Hold, error) {
	h, published, err := s.extend(ctx, holdID, clientID, s.ttl, true)
	switch {
	case errors.Is(err, errNoHold), errors.Is(err, ErrNotOwner):
		return Hold{}, ErrGone
	case err != nil:
		return Hold{}, err
	}
	if !published {
		s.publishOrLog(ctx, Event{Type: EventHeartbeat, Hold: h})
	}
	return h, nil
}

// Pin prepares the booking path: the hold must be live and the client's,
// and it then lives at least pin more (max of its remaining TTL and pin),
// so it cannot lapse while the booking is inserted. Unlike a heartbeat a
// pin may reach past KeepUntil, by pin at most (itself at most a minute):
// a patient confirming just before it is not cut off mid-insert, and
// repeated pins cannot keep a hold. Errors: ErrExpired (expired or
// unknown), ErrNotOwner. Publishes nothing.
func (s *Store) Pin(ctx context.Context, holdID, clientID string, pin time.Duration) (Hold, error) {
	h, _, err := s.extend(ctx, holdID, clientID, min(max(pin, time.Millisecond), maxPin), false)
	if errors.Is(err, errNoHold) {
		return Hold{}, ErrExpired
	}
	return h, err
}

// errNoHold is extend's "expired or unknown"; callers name it their way.
var errNoHold = errors.New("holds: no such live hold")

// extend runs extendScript. With announce (a heartbeat) the script also
// publishes the heartbeat event of an extended hold, built here; published
// says whether it did (if not, the caller publishes what it returned).
func (s *Store) extend(ctx context.Context, holdID, clientID string, d time.Duration, announce bool) (h Hold, published bool, err error) {
	h, ok, err := s.lookup(ctx, holdID)
	if err != nil {
		return Hold{}, false, err
	}
	if !ok {
		return Hold{}, false, errNoHold
	}
	now := s.now()
	exp := now.Add(d)
	limit := h.KeepUntil
	if limit.IsZero() {
		// A payload from before KeepUntil existed: its claim time is
		// unknown, so it counts as at its limit. A heartbeat answers gone
		// and the hold lapses within a TTL; a pin still gets its minute.
		limit = now
	}
	if !announce {
		limit = limit.Add(d) // a pin (see Pin)
	}
	capped := exp.After(limit)
	if capped {
		exp = limit
	}
	// Whole milliseconds, as Redis counts them; nothing left is gone.
	if d = exp.Sub(now).Truncate(time.Millisecond); d <= 0 {
		return Hold{}, false, errNoHold
	}
	if !capped {
		// A capped hold's expiry is its limit to the millisecond: that is
		// how a lapse at the end of the longest life is told apart.
		exp = now.Add(d)
	}
	// RFC3339Nano is the layout time.Time's MarshalJSON writes, so the
	// script's re-encoded payload reads back like one Go wrote.
	expText := msTime(exp.UnixMilli()).Format(time.RFC3339Nano)
	args := []any{holdID, clientID, d.Milliseconds(), exp.UnixMilli(), expText}
	if announce {
		extended := h
		extended.ExpiresAt = msTime(exp.UnixMilli())
		msg, channels, err := eventMessage(Event{Type: EventHeartbeat, Hold: extended})
		if err != nil {
			return Hold{}, false, err
		}
		args = append(args, string(msg))
		for _, ch := range channels {
			args = append(args, ch)
		}
	}
	res, err := extendScript.Run(ctx, s.rdb, h.scriptKeys(), args...).Slice()
	if err != nil {
		return Hold{}, false, fmt.Errorf("holds: extend: %w", err)
	}
	switch status(res) {
	case "ok":
		h, err := s.payloads.decode(str(res, 1))
		n, _ := res[2].(int64)
		return h, n == 1, err
	case "gone":
		return Hold{}, false, errNoHold
	case "notowner":
		return Hold{}, false, ErrNotOwner
	default:
		return Hold{}, false, fmt.Errorf("holds: extend: unexpected reply %v", res)
	}
}

// Release deletes the client's live hold and reports whether it did. An
// unknown, expired or already released hold is (false, nil): release is
// idempotent, and an expired hold is announced by the sweeper. Another
// client's live hold: ErrNotOwner, and the hold stays. Publishes "release"
// (reason "released") only when something was released.
func (s *Store) Release(ctx context.Context, holdID, clientID string) (bool, error) {
	h, ok, err := s.lookup(ctx, holdID)
	if err != nil || !ok {
		return false, err
	}
	res, err := releaseScript.Run(ctx, s.rdb, h.scriptKeys(), holdID, clientID).Slice()
	if err != nil {
		return false, fmt.Errorf("holds: release: %w", err)
	}
	switch status(res) {
	case "ok":
		released, err := s.payloads.decode(str(res, 1))
		if err != nil {
			return true, err
		}
		s.publishOrLog(ctx, Event{Type: EventRelease, Hold: released, Reason: ReasonReleased})
		return true, nil
	case "gone":
		return false, nil
	case "notowner":
		return false, ErrNotOwner
	default:
		return false, fmt.Errorf("holds: release: unexpected reply %v", res)
	}
}

// Consume removes a hold after its booking committed, with its index
// entries, whether or not the key has expired meanwhile. It publishes
// nothing (see ConsumeBooked).
func (s *Store) Consume(ctx context.Context, h Hold) error {
	return s.consume(ctx, h, nil, nil)
}

// ConsumeBooked is Consume that also publishes the booking's event (type
// "confirm") in the same Redis step: one round trip, and no page sees the
// hold vanish without the booking that took its place. The event's hold
// is h, as the booking describes it.
func (s *Store) ConsumeBooked(ctx context.Context, h Hold) error {
	msg, channels, err := eventMessage(Event{Type: EventConfirm, Hold: h})
	if err != nil {
		return err
	}
	return s.consume(ctx, h, msg, channels)
}

func (s *Store) consume(ctx context.Context, h Hold, msg []byte, channels []string) error {
	if h.ClinicID == uuid.Nil || h.HoldID == "" {
		return fmt.Errorf("%w: consume needs the hold as Pin returned it", ErrInvalid)
	}
	args := []any{h.HoldID, string(msg)}
	for _, ch := range channels {
		args = append(args, ch)
	}
	if err := consumeScript.Run(ctx, s.rdb, h.scriptKeys(), args...).Err(); err != nil {
		return fmt.Errorf("holds: consume: %w", err)
	}
	return nil
}

// HeldBy returns the live hold on one slot of one specialist, if any.
func (s *Store) HeldBy(ctx context.Context, clinicID, atid, specialistID uuid.UUID, start time.Time) (Hold, bool, error) {
	raw, err := s.rdb.Get(ctx, holdKey(clinicID, atid, specialistID, start)).Result()
	if errors.Is(err, redis.Nil) {
		return Hold{}, false, nil
	}
	if err != nil {
		return Hold{}, false, fmt.Errorf("holds: get: %w", err)
	}
	h, err := s.payloads.decode(raw)
	return h, err == nil, err
}

// Active lists every live hold of a clinic (meta entries whose expiry is
// ahead), ordered by start, specialist and id. One round trip: a MULTI of
// HGETALL and ZRANGEBYSCORE, so both describe the same moment.
func (s *Store) Active(ctx context.Context, clinicID uuid.UUID) ([]Hold, error) {
	var meta *redis.MapStringStringCmd
	var live *redis.StringSliceCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		meta = p.HGetAll(ctx, metaKey(clinicID))
		live = p.ZRangeByScore(ctx, expiryKey(clinicID), &redis.ZRangeBy{
			Min: "(" + strconv.FormatInt(s.now().UnixMilli(), 10), Max: "+inf",
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("holds: list: %w", err)
	}
	payloads := meta.Val()
	out := make([]Hold, 0, len(live.Val()))
	for _, id := range live.Val() {
		raw, ok := payloads[id]
		if !ok {
			continue
		}
		h, err := s.payloads.decode(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b Hold) int {
		// Bytes order UUIDs as their strings do.
		return cmp.Or(a.Start.Compare(b.Start), bytes.Compare(a.SpecialistID[:], b.SpecialistID[:]), cmp.Compare(a.HoldID, b.HoldID))
	})
	return out, nil
}

// ActiveHolds is Active in the slot engine's terms (slots.HoldSource).
func (s *Store) ActiveHolds(ctx context.Context, clinicID uuid.UUID) ([]availability.Busy, error) {
	hs, err := s.Active(ctx, clinicID)
	if err != nil {
		return nil, err
	}
	out := make([]availability.Busy, len(hs))
	for i, h := range hs {
		out[i] = availability.Busy{SpecialistID: h.SpecialistID, Start: h.Start, End: h.End, BufferBefore: h.BufferBefore, BufferAfter: h.BufferAfter}
	}
	return out, nil
}

// Publish sends an event, as JSON, on both the type's and the clinic's
// channel (one round trip). Events without a type or clinic id cannot be
// routed and are refused.
func (s *Store) Publish(ctx context.Context, ev Event) error {
	if ev.Type == "" || ev.ClinicID == uuid.Nil {
		return fmt.Errorf("%w: event needs a type and a clinic id", ErrInvalid)
	}
	msg, channels, err := eventMessage(ev)
	if err != nil {
		return err
	}
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, ch := range channels {
			p.Publish(ctx, ch, msg)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("holds: publish %s: %w", ev.Type, err)
	}
	return nil
}

// eventMessage is an event as published, and the channels it goes to: its
// type's (when it has one) and its clinic's.
func eventMessage(ev Event) ([]byte, []string, error) {
	msg, err := json.Marshal(ev)
	if err != nil {
		return nil, nil, fmt.Errorf("holds: encode event: %w", err)
	}
	channels := make([]string, 0, 2)
	if ev.AppointmentTypeID != uuid.Nil {
		channels = append(channels, Channel(ev.AppointmentTypeID))
	}
	return msg, append(channels, ClinicChannel(ev.ClinicID)), nil
}

// publishOrLog publishes after a state change that already happened in
// Redis: failing the request then would misreport the change, so a lost
// event is logged (streams resync from their snapshot on reconnect).
func (s *Store) publishOrLog(ctx context.Context, ev Event) {
	if err := s.Publish(ctx, ev); err != nil {
		s.log.Warn("publish hold event", "type", ev.Type, "holdId", ev.HoldID, "err", err)
	}
}

// lookup reads a hold's payload from the meta hash, to name its keys for a
// script (see "Declared keys" in the package doc). ok is false for a
// malformed id or a hold the index no longer knows.
func (s *Store) lookup(ctx context.Context, holdID string) (Hold, bool, error) {
	clinicID, ok := ParseHoldID(holdID)
	if !ok {
		return Hold{}, false, nil
	}
	raw, err := s.rdb.HGet(ctx, metaKey(clinicID), holdID).Result()
	if errors.Is(err, redis.Nil) {
		return Hold{}, false, nil
	}
	if err != nil {
		return Hold{}, false, fmt.Errorf("holds: read hold: %w", err)
	}
	h, err := s.payloads.decode(raw)
	if err != nil {
		return Hold{}, false, err
	}
	if h.ClinicID != clinicID || h.HoldID != holdID {
		return Hold{}, false, fmt.Errorf("holds: meta entry %s does not match its id", holdID)
	}
	return h, true, nil
}

// scriptKeys are the four keys every single-hold script declares, in order.
func (h Hold) scriptKeys() []string {
	return []string{h.key(), clientKey(h.ClinicID, h.ClientID), metaKey(h.ClinicID), expiryKey(h.ClinicID)}
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func status(res []any) string { return str(res, 0) }

func str(res []any, i int) string {
	if i >= len(res) {
		return ""
	}
	s, _ := res[i].(string)
	return s
}
