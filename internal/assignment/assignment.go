// Package assignment picks which specialist a pooled hold goes to: the
// highest priority first; among equals, an order that depends only on the
// slot, so every instance and every retry sees the same order and no
// specialist is favoured across slots.
package assignment

import (
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Candidate is a specialist free at the slot.
type Candidate struct {
	ID       uuid.UUID
	Priority int
}

// Seed is fnv1a32(appointmentTypeId + ":" + slotStartDate), the slot's
// tiebreak seed, with the start as RFC 3339 in UTC: every instance (and
// every client) computes the same order for the same slot.
func Seed(appointmentTypeID uuid.UUID, slotStart time.Time) uint32 {
	h := fnv.New32a()
	h.Write([]byte(appointmentTypeID.String() + ":" + slotStart.UTC().Format(time.RFC3339)))
	return h.Sum32()
}

// Order returns the candidates in the order to try them: priority
// descending; each group of equal priority sorted by id and rotated by the
// seed. The input is not modified.
func Order(appointmentTypeID uuid.UUID, slotStart time.Time, cands []Candidate) []Candidate {
	out := slices.Clone(cands)
	slices.SortFunc(out, func(a, b Candidate) int {
		if a.Priority != b.Priority {
			return b.Priority - a.Priority
		}
		return strings.Compare(a.ID.String(), b.ID.String())
	})
	seed := Seed(appointmentTypeID, slotStart)
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && out[j].Priority == out[i].Priority {
			j++
		}
		if n := j - i; n > 1 {
			group := out[i:j]
			k := int(seed % uint32(n))
			rotated := append(slices.Clone(group[k:]), group[:k]...)
			copy(group, rotated)
		}
		i = j
	}
	return out
}
