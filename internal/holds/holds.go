package holds

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Hold is one reservation, and also the JSON payload stored in Redis.
type Hold struct {
	HoldID            string
	ClientID          string
	ClinicID          uuid.UUID
	AppointmentTypeID uuid.UUID
	SpecialistID      uuid.UUID
	// ResourceID is the room or device the hold reserves with its
	// specialist, for a type that needs one (uuid.Nil: none); its booking
	// names it in the insert, so the gate gives it that room.
	ResourceID uuid.UUID
	Start      time.Time // slot start, UTC
	End        time.Time // slot end, UTC
	ExpiresAt  time.Time // when the hold lapses without a heartbeat, UTC, ms precision
	// KeepUntil is as far as heartbeats may carry the hold: its claim plus
	// the store's longest life, or as far as the server's Keep raised it.
	// Zero in payloads written before it existed.
	KeepUntil time.Time
	// The buffers of the held type: the slot overlay blocks them around the
	// hold just as it does around a booking. Stored as whole minutes.
	BufferBefore, BufferAfter time.Duration
	// network is the claimer's address network (clientaddr.Network), empty
	// for claims without an address and payloads written before it existed.
	// The sweeper names the re-claim cool-off key by it. It stays out of
	// events: an address is nobody else's business.
	network string
}

// holdJSON is the wire form of Hold. Field names are the public API's
// (slotStartDate, holdExpiresAt, ...), so clients read it as is; omitzero
// lets confirm/cancel events carry only what their caller knows. The
// buffers are always written: 0 is a meaningful value for the overlay.
type holdJSON struct {
	HoldID            string    `json:"holdId,omitzero"`
	ClientID          string    `json:"clientId,omitzero"`
	ClinicID          uuid.UUID `json:"clinicId,omitzero"`
	AppointmentTypeID uuid.UUID `json:"appointmentTypeId,omitzero"`
	SpecialistID      uuid.UUID `json:"specialistId,omitzero"`
	ResourceID        uuid.UUID `json:"resourceId,omitzero"`
	Start             time.Time `json:"slotStartDate,omitzero"`
	End               time.Time `json:"slotEndDate,omitzero"`
	ExpiresAt         time.Time `json:"holdExpiresAt,omitzero"`
	KeepUntil         time.Time `json:"holdKeepUntil,omitzero"`
	BufferBeforeMin   int       `json:"bufferBeforeMin"`
	BufferAfterMin    int       `json:"bufferAfterMin"`
	AddrNet           string    `json:"addrNet,omitzero"`
}

func (h Hold) wire() holdJSON {
	return holdJSON{
		HoldID:            h.HoldID,
		ClientID:          h.ClientID,
		ClinicID:          h.ClinicID,
		AppointmentTypeID: h.AppointmentTypeID,
		SpecialistID:      h.SpecialistID,
		ResourceID:        h.ResourceID,
		Start:             utc(h.Start),
		End:               utc(h.End),
		ExpiresAt:         utc(h.ExpiresAt),
		KeepUntil:         utc(h.KeepUntil),
		BufferBeforeMin:   int(h.BufferBefore / time.Minute),
		BufferAfterMin:    int(h.BufferAfter / time.Minute),
		AddrNet:           h.network,
	}
}

func (w holdJSON) hold() Hold {
	return Hold{
		HoldID:            w.HoldID,
		ClientID:          w.ClientID,
		ClinicID:          w.ClinicID,
		AppointmentTypeID: w.AppointmentTypeID,
		SpecialistID:      w.SpecialistID,
		ResourceID:        w.ResourceID,
		Start:             utc(w.Start),
		End:               utc(w.End),
		ExpiresAt:         utc(w.ExpiresAt),
		KeepUntil:         utc(w.KeepUntil),
		BufferBefore:      time.Duration(w.BufferBeforeMin) * time.Minute,
		BufferAfter:       time.Duration(w.BufferAfterMin) * time.Minute,
		network:           w.AddrNet,
	}
}

// reachedMaxLife says whether the hold was kept to the end of its longest
// life: its last heartbeat could only extend it to KeepUntil. Only such a
// hold bars its network from the slot for a while when it lapses; one that
// lapsed earlier (a page closed, a laptop asleep) may be held again at once.
func (h Hold) reachedMaxLife() bool {
	return !h.KeepUntil.IsZero() && h.ExpiresAt.Equal(h.KeepUntil)
}

// utc keeps the zero time zero (an event may leave times out).
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// MarshalJSON writes the payload form (buffers as minutes).
func (h Hold) MarshalJSON() ([]byte, error) { return json.Marshal(h.wire()) }

// UnmarshalJSON reads the payload form.
func (h *Hold) UnmarshalJSON(b []byte) error {
	var w holdJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*h = w.hold()
	return nil
}

func decodeHold(raw string) (Hold, error) {
	var h Hold
	if err := json.Unmarshal([]byte(raw), &h); err != nil {
		return Hold{}, fmt.Errorf("holds: decode payload: %w", err)
	}
	return h, nil
}

// payloadCache maps payloads to holds; it starts over when full. Every
// slot list and every hold request reads all of a clinic's holds, mostly
// the same payloads again (a payload is its hold: a heartbeat writes a
// new one).
type payloadCache struct {
	mu sync.Mutex
	m  map[string]Hold
}

const payloadCacheSize = 4096

// decode reads a stored payload, once.
func (c *payloadCache) decode(raw string) (Hold, error) {
	c.mu.Lock()
	h, ok := c.m[raw]
	c.mu.Unlock()
	if ok {
		return h, nil
	}
	h, err := decodeHold(raw)
	if err != nil {
		return Hold{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= payloadCacheSize {
		c.m = make(map[string]Hold)
	}
	c.m[raw] = h
	return h, nil
}

// Event types and release reasons.
const (
	EventHold      = "hold"
	EventHeartbeat = "heartbeat"
	EventRelease   = "release"
	EventConfirm   = "confirm"
	EventCancel    = "cancel"
	// EventCalendar says a clinic's set-up changed (hours, types, its
	// zone): every view of its calendar is out of date.
	EventCalendar = "calendar"

	ReasonReleased = "released" // the owner let go
	ReasonExpired  = "expired"  // the TTL ran out; published by the sweeper
)

// Event is what is published on pub/sub. It never carries a raw client id
// (only its hash) and never patient data.
type Event struct {
	Type   string // EventHold, EventHeartbeat, ...
	Hold          // for confirm/cancel the caller fills what it has
	Reason string // release only: ReasonReleased or ReasonExpired
	// ClientHash is ClientHash(owner's client id). On the wire it replaces
	// the client id: events never carry a raw client id, yet a stream can
	// tell its own holds by hashing its own id.
	ClientHash string
}

type eventJSON struct {
	Type string `json:"type"`
	holdJSON
	ClientHash string `json:"clientHash,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// ClientHash is how events name a hold's owner.
func ClientHash(clientID string) string {
	if clientID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("clinic-booking-client:" + clientID))
	return hex.EncodeToString(sum[:12])
}

// MarshalJSON flattens the hold's fields next to "type" and "reason", with
// the owner as a hash. It must be defined: Hold's own MarshalJSON would
// otherwise be promoted and drop the type.
func (e Event) MarshalJSON() ([]byte, error) {
	w := e.Hold.wire()
	hash := e.ClientHash
	if hash == "" {
		hash = ClientHash(w.ClientID)
	}
	w.ClientID, w.AddrNet = "", ""
	return json.Marshal(eventJSON{Type: e.Type, holdJSON: w, ClientHash: hash, Reason: e.Reason})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w eventJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Event{Type: w.Type, Hold: w.holdJSON.hold(), Reason: w.Reason, ClientHash: w.ClientHash}
	return nil
}

// Channel is the pub/sub channel of one appointment type's booking page.
func Channel(appointmentTypeID uuid.UUID) string {
	return "holds:events:{" + appointmentTypeID.String() + "}"
}

// ClinicChannel is the pub/sub channel of all holds of a clinic (calendar
// and kiosk streams).
func ClinicChannel(clinicID uuid.UUID) string {
	return "holds:events:clinic:{" + clinicID.String() + "}"
}

// Errors. The HTTP layer maps them; they carry no status codes.
var (
	// ErrMoved: a counter the claim watched (ClaimRequest.Watch) moved;
	// nothing was claimed.
	ErrMoved = errors.New("holds: a watched counter moved")
	// ErrQuota: the client already has its quota of live holds of this type.
	ErrQuota = errors.New("holds: client hold quota reached")
	// ErrAddressQuota: the client's address already has its quota of live
	// holds in the clinic.
	ErrAddressQuota = errors.New("holds: address hold quota reached")
	// ErrHeld matches (errors.Is) every *HeldError.
	ErrHeld = errors.New("holds: slot is held by another client")
	// ErrGone: heartbeat of a hold that expired, never existed, or is not the caller's.
	ErrGone = errors.New("holds: hold is gone")
	// ErrExpired: pin of a hold that expired or never existed.
	ErrExpired = errors.New("holds: hold expired")
	// ErrNotOwner: the hold is live but belongs to another client.
	ErrNotOwner = errors.New("holds: hold belongs to another client")
	// ErrReclaimTooSoon matches (errors.Is) every *ReclaimError.
	ErrReclaimTooSoon = errors.New("holds: slot was held from this network too recently")
	// ErrCooldown matches (errors.Is) every *CooldownError.
	ErrCooldown = errors.New("holds: client is in its booking cooldown")
	// ErrInvalid: a malformed request (empty client id, nil ids, end before start).
	ErrInvalid = errors.New("holds: invalid request")
)

// HeldError is returned by Claim when another client holds the slot. It is
// never about the caller's own hold: re-claiming one's own slot returns
// that hold without an error.
type HeldError struct {
	RetryAfter time.Duration // the other hold's remaining TTL
	Hold       Hold          // the other hold (its ClientID must not reach the browser)
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("holds: slot is held by another client (retry after %s)", e.RetryAfter)
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// ReclaimError is returned by Claim when a hold on the same slot, claimed
// from the same network, lapsed at the end of its life less than the
// re-claim cool-off ago (Store.SetReclaimCoolOff), or was released by its
// owner and would still be within its life (Store.Release). Other networks
// may claim the slot meanwhile.
type ReclaimError struct {
	RetryAfter time.Duration // until the cool-off or the bar ends
}

func (e *ReclaimError) Error() string {
	return fmt.Sprintf("holds: slot was held from this network too recently (retry after %s)", e.RetryAfter)
}

// Is makes errors.Is(err, ErrReclaimTooSoon) true.
func (e *ReclaimError) Is(target error) bool { return target == ErrReclaimTooSoon }

// Hold ids: "h" + 32 hex digits of the clinic id + 20 hex digits of random.
const (
	holdIDRandomBytes = 10
	holdIDLen         = 1 + 2*16 + 2*holdIDRandomBytes
)

func newHoldID(clinicID uuid.UUID) string {
	var r [holdIDRandomBytes]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (it aborts the process instead)
	return "h" + hex.EncodeToString(clinicID[:]) + hex.EncodeToString(r[:])
}

// ParseHoldID returns the clinic encoded in a hold id. It accepts only the
// exact form newHoldID writes (lowercase hex, fixed length, non-nil clinic),
// so a client-supplied id can never name keys outside its clinic's tag.
func ParseHoldID(s string) (clinicID uuid.UUID, ok bool) {
	if len(s) != holdIDLen || s[0] != 'h' {
		return uuid.Nil, false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return uuid.Nil, false
		}
	}
	if _, err := hex.Decode(clinicID[:], []byte(s[1:33])); err != nil || clinicID == uuid.Nil {
		return uuid.Nil, false
	}
	return clinicID, true
}

// Key names; see the package doc.

const clinicsKey = "holds:clinics"

func tag(clinicID uuid.UUID) string { return "{" + clinicID.String() + "}" }

func holdKey(clinicID, atid, specialistID uuid.UUID, start time.Time) string {
	return "hold:" + tag(clinicID) + ":" + atid.String() + ":" + start.UTC().Format(time.RFC3339) + ":" + specialistID.String()
}

func (h Hold) key() string { return holdKey(h.ClinicID, h.AppointmentTypeID, h.SpecialistID, h.Start) }

func metaKey(clinicID uuid.UUID) string { return "holds:meta:" + tag(clinicID) }

// registeredKey marks a clinic recently put in holds:clinics (see register).
func registeredKey(clinicID uuid.UUID) string { return "holds:registered:" + tag(clinicID) }
func expiryKey(clinicID uuid.UUID) string     { return "holds:expiry:" + tag(clinicID) }

func clientKey(clinicID uuid.UUID, clientID string) string {
	return "client:" + tag(clinicID) + ":" + clientID + ":holds"
}

func addressKey(clinicID uuid.UUID, network string) string {
	return "address:" + tag(clinicID) + ":" + network + ":holds"
}

func specialistKey(clinicID, specialistID uuid.UUID) string {
	return "holds:specialist:" + tag(clinicID) + ":" + specialistID.String()
}

func roomKey(clinicID, resourceID uuid.UUID) string {
	return "holds:room:" + tag(clinicID) + ":" + resourceID.String()
}

// reclaimKey is the re-claim cool-off (or a release's bar) of one slot (a
// hold key) for one network: hold:{c}:<rest> becomes
// reclaim:{c}:<rest>:<network>.
func reclaimKey(holdKey, network string) string {
	return "reclaim:" + strings.TrimPrefix(holdKey, "hold:") + ":" + network
}

func cooldownKey(clinicID uuid.UUID, clientID string, atid uuid.UUID) string {
	return "client_limit:" + tag(clinicID) + ":" + clientID + ":" + atid.String()
}

func cooldownReverseKey(clinicID, bookingID uuid.UUID) string {
	return "client_limit:booking:" + tag(clinicID) + ":" + bookingID.String()
}

// CooldownError is returned by a claim that checks the cooldown
// (ClaimRequest.Cooldown) while the client's booking cooldown for the type
// runs.
type CooldownError struct {
	RetryAfter time.Duration // until the cooldown ends
}

func (e *CooldownError) Error() string {
	return fmt.Sprintf("holds: client is in its booking cooldown (retry after %s)", e.RetryAfter)
}

// Is makes errors.Is(err, ErrCooldown) true.
func (e *CooldownError) Is(target error) bool { return target == ErrCooldown }
