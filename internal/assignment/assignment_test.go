package assignment

import (
	"hash/fnv"
	"testing"
	"time"

	"github.com/google/uuid"
)

func ids(cs []Candidate) []uuid.UUID {
	out := make([]uuid.UUID, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func TestOrder(t *testing.T) {
	at := uuid.MustParse("550e8400-e29b-41d4-a716-446655440000")
	start := time.Date(2025, 3, 15, 9, 0, 0, 0, time.UTC)
	a := uuid.MustParse("00000000-0000-0000-0000-00000000000a")
	b := uuid.MustParse("00000000-0000-0000-0000-00000000000b")
	c := uuid.MustParse("00000000-0000-0000-0000-00000000000c")
	d := uuid.MustParse("00000000-0000-0000-0000-00000000000d")

	t.Run("HighestPriorityFirst", func(t *testing.T) {
		got := Order(at, start, []Candidate{{a, 1}, {b, 5}, {c, 3}})
		if want := []uuid.UUID{b, c, a}; !equal(ids(got), want) {
			t.Fatalf("got %v want %v", ids(got), want)
		}
	})

	t.Run("SeedIsFNV1aOfTypeAndStart", func(t *testing.T) {
		h := fnv.New32a()
		h.Write([]byte("550e8400-e29b-41d4-a716-446655440000:2025-03-15T09:00:00Z"))
		if Seed(at, start) != h.Sum32() {
			t.Fatal("seed differs from fnv1a32(atid:slotStart)")
		}
		// The same instant in another zone is the same slot.
		if Seed(at, start.In(time.FixedZone("x", 3600))) != Seed(at, start) {
			t.Fatal("seed depends on the zone")
		}
	})

	t.Run("TiesRotateBySeedAndAreStable", func(t *testing.T) {
		in := []Candidate{{d, 2}, {b, 2}, {a, 2}, {c, 9}}
		got := Order(at, start, in)
		k := int(Seed(at, start) % 3)
		sorted := []uuid.UUID{a, b, d}
		want := append([]uuid.UUID{c}, append(sorted[k:], sorted[:k]...)...)
		if !equal(ids(got), want) {
			t.Fatalf("got %v want %v", ids(got), want)
		}
		for range 10 {
			// Input order does not matter; the same slot gives the same order.
			if again := Order(at, start, []Candidate{{a, 2}, {c, 9}, {d, 2}, {b, 2}}); !equal(ids(again), want) {
				t.Fatal("order is not stable")
			}
		}
		if in[0].ID != d {
			t.Fatal("input modified")
		}
	})

	t.Run("TiesSpreadAcrossSlots", func(t *testing.T) {
		first := map[uuid.UUID]int{}
		for i := range 200 {
			got := Order(at, start.Add(time.Duration(i)*15*time.Minute), []Candidate{{a, 1}, {b, 1}, {c, 1}})
			first[got[0].ID]++
		}
		for _, id := range []uuid.UUID{a, b, c} {
			if first[id] < 30 {
				t.Fatalf("specialist %v first only %d of 200 times: %v", id, first[id], first)
			}
		}
	})
}

func equal(a, b []uuid.UUID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
