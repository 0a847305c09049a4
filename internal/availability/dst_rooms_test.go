package availability

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

// A type that needs a room across clock changes: the room's hours are
// wall-clock times turned into real time by the date's own clock, as a
// specialist's are, so a slot is offered only where both are open.
func TestComputeWithRoomsAcrossDaylightSaving(t *testing.T) {
	roomA := uuid.UUID{15: 1}
	roomB := uuid.UUID{15: 2}
	tests := []struct {
		name      string
		zone      string
		date      string
		resources []Resource
		busy      []ResourceBusy
		want      []string // slot starts, UTC
		wantRooms [][]uuid.UUID
	}{
		{
			name:      "Berlin spring-forward: a room open 01:00-04:00 is open two real hours",
			zone:      "Europe/Berlin",
			date:      "2026-03-29",
			resources: []Resource{{ID: roomA, Weekly: on([]time.Weekday{time.Sunday}, hours("01:00", "04:00"))}},
			want:      []string{"2026-03-29T00:00:00Z", "2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"},
		},
		{
			name:      "Berlin fall-back: a room open 02:00-03:00 is open through both 02:00s",
			zone:      "Europe/Berlin",
			date:      "2026-10-25",
			resources: []Resource{{ID: roomA, Weekly: on([]time.Weekday{time.Sunday}, hours("02:00", "03:00"))}},
			want:      []string{"2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:00:00Z", "2026-10-25T01:30:00Z"},
		},
		{
			name:      "Berlin fall-back: the room booked at the second 02:00 drops that slot only",
			zone:      "Europe/Berlin",
			date:      "2026-10-25",
			resources: []Resource{{ID: roomA, Weekly: on([]time.Weekday{time.Sunday}, hours("02:00", "03:00"))}},
			busy: []ResourceBusy{{ResourceID: roomA,
				Start: mustTime(t, "2026-10-25T01:00:00Z"), End: mustTime(t, "2026-10-25T01:30:00Z")}},
			want: []string{"2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"},
		},
		{
			name: "New York spring-forward: of two rooms, the free one serves the slot the other is booked at",
			zone: "America/New_York",
			date: "2026-03-08",
			resources: []Resource{
				{ID: roomB, Weekly: on([]time.Weekday{time.Sunday}, hours("03:00", "04:00"))},
				{ID: roomA, AlwaysOpen: true},
			},
			busy: []ResourceBusy{{ResourceID: roomA,
				Start: mustTime(t, "2026-03-08T07:00:00Z"), End: mustTime(t, "2026-03-08T07:30:00Z")}},
			// 00:00 to 05:30 EST/EDT; 03:00 EDT (07:00Z) only in room B.
			want: []string{
				"2026-03-08T05:00:00Z", "2026-03-08T05:30:00Z", "2026-03-08T06:00:00Z", "2026-03-08T06:30:00Z",
				"2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z", "2026-03-08T08:00:00Z", "2026-03-08T08:30:00Z",
				"2026-03-08T09:00:00Z", "2026-03-08T09:30:00Z",
			},
			wantRooms: [][]uuid.UUID{
				{roomA}, {roomA}, {roomA}, {roomA}, {roomB}, {roomA, roomB}, {roomA}, {roomA}, {roomA}, {roomA},
			},
		},
		{
			name:      "Lord Howe fall-back: an always-open room closed that date serves nothing",
			zone:      "Australia/Lord_Howe",
			date:      "2026-04-05",
			resources: []Resource{{ID: roomA, AlwaysOpen: true, Closed: []Date{mustDate(t, "2026-04-05")}}},
			want:      []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := mustZone(t, tt.zone)
			d := mustDate(t, tt.date)
			q := Query{
				Zone: loc,
				Type: AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute},
				Specialists: []Specialist{{ID: uuid.UUID{0: 9}, Active: true,
					Weekly: on([]time.Weekday{d.Weekday()}, hours("00:00", "06:00"))}},
				From: d, To: d,
				NeedsResource: true, Resources: tt.resources, ResourceBusy: tt.busy,
			}
			got := Compute(q)
			if !slices.Equal(rfc3339(got), tt.want) {
				t.Fatalf("slots\n%s\nwant\n%s", lines(rfc3339(got)), lines(tt.want))
			}
			for i, want := range tt.wantRooms {
				if !slices.Equal(got[i].ResourceIDs, want) {
					t.Errorf("slot %s: rooms %v, want %v", tt.want[i], got[i].ResourceIDs, want)
				}
			}
		})
	}
}

// A type that needs a room that does not exist (none active of its kind)
// has no slots; one whose rooms are always open and free has the slots it
// would have without them.
func TestComputeWithRoomsLimitsOnly(t *testing.T) {
	loc := mustZone(t, "Europe/Berlin")
	d := mustDate(t, "2026-10-26")
	q := Query{
		Zone: loc,
		Type: AppointmentType{Duration: 30 * time.Minute, Step: 15 * time.Minute},
		Specialists: []Specialist{{ID: uuid.UUID{0: 9}, Active: true,
			Weekly: on(weekdays, hours("08:00", "12:00"))}},
		From: d, To: d.AddDays(6),
	}
	without := Compute(q)
	q.NeedsResource = true
	if got := Compute(q); len(got) != 0 {
		t.Fatalf("%d slots with no room to serve them", len(got))
	}
	q.Resources = []Resource{{ID: uuid.UUID{15: 1}, AlwaysOpen: true}}
	if got := Compute(q); !equalSlots(got, without) || len(got) == 0 {
		t.Fatalf("an always-open free room changed the slots:\n%s\nwant\n%s", lines(rfc3339(got)), lines(rfc3339(without)))
	}
}
