package slots

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/testkit"
)

var clusterSlot = testkit.ClusterSlot

// The rebuild and clear scripts touch a day's bitmap and its epoch
// together; the script that follows a booking touches its bitmaps, its
// days' counters and the lists it carries over (of any type): all in the
// clinic's slot.
func TestBitmapAndListKeysShareTheClinicsClusterSlot(t *testing.T) {
	clinic, sp := uuid.New(), uuid.New()
	d := availability.Date{Year: 2030, Month: 1, Day: 7}
	want := clusterSlot(GenerationKey(clinic))
	keys := []string{bitmapKey(clinic, sp, d), epochKey(clinic, sp, d), dayGenerationKey(clinic, d),
		listKey(clinic, Request{AppointmentTypeID: uuid.New(), From: d, To: d}, "a", []string{"1", "2"}),
		listKey(clinic, Request{AppointmentTypeID: uuid.New(), SpecialistID: sp, From: d, To: d.AddDays(6)}, "b", []string{"", "7"})}
	for _, k := range keys {
		if clusterSlot(k) != want {
			t.Fatalf("%s is in slot %d, %s in %d", k, clusterSlot(k), GenerationKey(clinic), want)
		}
	}
}

// A cache key's generations are read with one MGET: the clinic's set-up
// generation and its days' must share a slot.
func TestGenerationKeysShareOneClusterSlot(t *testing.T) {
	clinic := uuid.New()
	want := clusterSlot(GenerationKey(clinic))
	d := availability.Date{Year: 2030, Month: 1, Day: 7}
	for i := range 62 {
		if k := dayGenerationKey(clinic, d.AddDays(i)); clusterSlot(k) != want {
			t.Fatalf("%s is in slot %d, %s in %d", k, clusterSlot(k), GenerationKey(clinic), want)
		}
	}
}

// setRange (BITFIELD writes of up to 48 bits) sets exactly the bits of the
// range, whatever its length and alignment.
func TestBitmapMarkSetsExactlyTheRange(t *testing.T) {
	rdb := testkit.Redis(t)
	ctx := t.Context()
	key := "availability:{" + uuid.NewString() + "}:test"
	t.Cleanup(func() { rdb.Del(context.Background(), key) })
	for _, r := range [][2]int64{{0, 0}, {7, 36}, {100, 147}, {200, 248}, {301, 400}, {0, 1439}} {
		rdb.Del(ctx, key)
		rdb.SetBit(ctx, key, 1500, 0)
		if err := markScript.Run(ctx, rdb, []string{key}, r[0], r[1]).Err(); err != nil {
			t.Fatal(err)
		}
		if n := rdb.BitCount(ctx, key, nil).Val(); n != r[1]-r[0]+1 {
			t.Fatalf("range %v: %d bits set, want %d", r, n, r[1]-r[0]+1)
		}
		for _, b := range []int64{r[0], r[1]} {
			if rdb.GetBit(ctx, key, b).Val() != 1 {
				t.Fatalf("range %v: bit %d not set", r, b)
			}
		}
		if r[0] > 0 && rdb.GetBit(ctx, key, r[0]-1).Val() != 0 || rdb.GetBit(ctx, key, r[1]+1).Val() != 0 {
			t.Fatalf("range %v: a neighbouring bit is set", r)
		}
	}
}
