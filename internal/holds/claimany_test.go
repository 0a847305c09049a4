package holds

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/testkit"
)

// anyOf claims f.start for client with the first of sps that can have it.
func (f *fixture) anyOf(client string, sps ...uuid.UUID) (Hold, error) {
	f.t.Helper()
	req := f.req(client, f.start)
	req.Quota = 5
	return f.s.ClaimAny(f.t.Context(), req, sps)
}

// claimWith claims f.start for client with specialist sp.
func (f *fixture) claimWith(client string, sp uuid.UUID) Hold {
	f.t.Helper()
	req := f.req(client, f.start)
	req.SpecialistID = sp
	h, err := f.s.Claim(f.t.Context(), req)
	if err != nil {
		f.t.Fatalf("claim with %s: %v", sp, err)
	}
	return h
}

func TestClaimAnyTakesTheFirstSpecialistNoOtherHoldBlocks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	a, b, c := f.sp, uuid.New(), uuid.New()
	other := f.claimWith("client-b", a)

	h, err := f.anyOf("client-a", a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	if h.SpecialistID != b || h.ClientID != "client-a" {
		t.Fatalf("got the hold %+v, want client-a's with the second specialist %s", h, b)
	}
	got, ok, err := f.s.HeldBy(t.Context(), f.clinic, f.atid, b, f.start)
	if err != nil || !ok || got != h {
		t.Fatalf("HeldBy(b) = %+v, %v, %v; want the claimed hold", got, ok, err)
	}
	if _, ok, _ := f.s.HeldBy(t.Context(), f.clinic, f.atid, c, f.start); ok {
		t.Fatal("the third specialist is held too; the claim must take one")
	}
	if got, _, _ := f.s.HeldBy(t.Context(), f.clinic, f.atid, a, f.start); got != other {
		t.Fatalf("the first specialist's hold changed: %+v", got)
	}

	// A re-click is answered with the client's own hold, whichever
	// specialist it is with.
	again, err := f.anyOf("client-a", a, b, c)
	if err != nil || again != h {
		t.Fatalf("re-claim = %+v, %v; want the same hold", again, err)
	}
}

func TestClaimAnyRefusedByEveryCandidateNamesTheLongestHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	a, b := f.sp, uuid.New()
	f.claimWith("client-b", a)
	f.s.ttl = 50 * time.Second // b's hold lives longer
	long := f.claimWith("client-c", b)

	_, err := f.anyOf("client-a", a, b)
	var he *HeldError
	if !errors.As(err, &he) || !errors.Is(err, ErrHeld) {
		t.Fatalf("err = %v, want *HeldError", err)
	}
	if he.Hold.HoldID != long.HoldID || he.RetryAfter <= 30*time.Second {
		t.Fatalf("refused with %+v after %s, want the longer hold %s (> 30s)", he.Hold, he.RetryAfter, long.HoldID)
	}
	if n := f.rdb.HLen(t.Context(), metaKey(f.clinic)).Val(); n != 2 {
		t.Fatalf("%d holds in meta, want the 2 that were there", n)
	}
}

func TestClaimAnyWithoutSpecialistsIsInvalid(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	for _, sps := range [][]uuid.UUID{nil, {f.sp, uuid.Nil}} {
		if _, err := f.anyOf("client-a", sps...); !errors.Is(err, ErrInvalid) {
			t.Fatalf("ClaimAny(%v) = %v, want ErrInvalid", sps, err)
		}
	}
}

// Many clients released together on one start with three specialists:
// exactly three win, one per specialist.
func TestClaimAnyUnderConcurrencyGivesEachSpecialistOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	sps := []uuid.UUID{f.sp, uuid.New(), uuid.New()}
	wonBy := make([]uuid.UUID, 40)
	errs := testkit.Race(40, func(i int) error {
		h, err := f.anyOf(fmt.Sprintf("client-%d", i), sps...)
		wonBy[i] = h.SpecialistID
		return err
	})
	won := map[uuid.UUID]int{}
	for i, err := range errs {
		var he *HeldError
		switch {
		case err == nil:
			won[wonBy[i]]++
		case errors.As(err, &he):
		default:
			t.Errorf("client %d: %v", i, err)
		}
	}
	for _, sp := range sps {
		if won[sp] != 1 {
			t.Errorf("specialist %s won %d times, want once", sp, won[sp])
		}
	}
	if len(won) != len(sps) {
		t.Errorf("winners with %d specialists, want %d", len(won), len(sps))
	}
}

// The clinic is registered for the sweeper by the claim that finds it
// without its mark, and again by a process that has not registered it for
// a minute; the claims in between save the command.
func TestClaimRegistersTheClinicWhenItHadNoHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	now := time.Now()
	f.s.now = func() time.Time { return now }
	registered := func() bool { return f.rdb.SIsMember(ctx, clinicsKey, f.clinic.String()).Val() }

	f.claim("client-a", f.slot(0))
	if !registered() {
		t.Fatal("the first hold of a clinic did not register it")
	}
	f.hideFromGlobalSweepers()
	f.claim("client-b", f.slot(1))
	if registered() {
		t.Fatal("a claim beside other holds, a moment after this process registered the clinic, registered it again")
	}

	// Another process (a store without the memory) registers it again when
	// the set lost it, as soon as its first minute is over.
	other := NewStore(f.rdb, 30*time.Second, nil)
	other.now = func() time.Time { return now }
	if _, err := other.Claim(ctx, f.req("client-c", f.slot(2))); err != nil {
		t.Fatal(err)
	}
	if !registered() {
		t.Fatal("a process's first claim of the clinic did not register it")
	}
	f.hideFromGlobalSweepers()
	now = now.Add(registerEvery + time.Second)
	f.claim("client-d", f.slot(3))
	if !registered() {
		t.Fatal("a minute later the claim did not register the clinic again")
	}

	// The mark gone (a Redis that lost its data): the next claim
	// registers at once.
	f.hideFromGlobalSweepers()
	f.rdb.Del(ctx, registeredKey(f.clinic))
	f.claim("client-e", f.slot(4))
	if !registered() {
		t.Fatal("a claim in a clinic without its mark did not register it")
	}
	if ttl := f.rdb.TTL(ctx, registeredKey(f.clinic)).Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("the mark lives %s, want at most an hour", ttl)
	}
}

// Each candidate's payload and event is the hold's own encoding, even for
// a client id chosen to look like a specialist's id or JSON.
func TestWithSpecialistIsTheEncodingOfTheOtherSpecialistsHold(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	for _, client := range []string{"client-a", a.String(), `"specialistId":"` + a.String() + `"`} {
		h := Hold{HoldID: newHoldID(uuid.New()), ClientID: client, ClinicID: uuid.New(), AppointmentTypeID: uuid.New(),
			SpecialistID: a, Start: time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC), End: time.Date(2030, 1, 1, 9, 30, 0, 0, time.UTC)}
		other := h
		other.SpecialistID = b
		for _, enc := range []func(Hold) []byte{
			func(h Hold) []byte { p, _ := json.Marshal(h); return p },
			func(h Hold) []byte { m, _, _ := eventMessage(Event{Type: EventHold, Hold: h}); return m },
		} {
			if got, want := withSpecialist(enc(h), a, b), string(enc(other)); got != want {
				t.Errorf("client %q:\n got %s\nwant %s", client, got, want)
			}
		}
	}
}

// Active reads a clinic with more live holds than Lua unpacks at once.
func TestActiveListsThousandsOfHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	const n = 9000
	exp := float64(time.Now().Add(time.Minute).UnixMilli())
	pipe := f.rdb.Pipeline()
	for i := range n {
		h := Hold{HoldID: newHoldID(f.clinic), ClientID: fmt.Sprintf("c%d", i), ClinicID: f.clinic, AppointmentTypeID: f.atid,
			SpecialistID: f.sp, Start: f.slot(i), End: f.slot(i).Add(30 * time.Minute)}
		raw, _ := json.Marshal(h)
		pipe.HSet(ctx, metaKey(f.clinic), h.HoldID, raw)
		pipe.ZAdd(ctx, expiryKey(f.clinic), redis.Z{Score: exp, Member: h.HoldID})
	}
	pipe.ZAdd(ctx, expiryKey(f.clinic), redis.Z{Score: exp, Member: "h-without-payload"})
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.Active(ctx, f.clinic)
	if err != nil || len(got) != n {
		t.Fatalf("Active = %d holds, %v; want %d", len(got), err, n)
	}
}
