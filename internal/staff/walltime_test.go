package staff_test

import (
	"testing"
	"time"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/staff"
)

// A typed time in the spring-forward gap is refused rather than moved an
// hour on (time.Date's reading); one in the autumn repeat is its first
// occurrence, as the slot engine offers it first.
func TestTypedTimeAcrossDST(t *testing.T) {
	loc := berlin(t)
	spring := availability.Date{Year: 2027, Month: time.March, Day: 28}
	autumn := availability.Date{Year: 2027, Month: time.October, Day: 31}

	t.Run("GapIsRefused", func(t *testing.T) {
		for _, err := range []error{
			func() error { _, err := staff.WallStart("time", loc, spring, 2*60+30); return err }(),
			func() error { _, err := staff.ParseLocalTime("start", "2027-03-28T02:30", loc); return err }(),
		} {
			if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Invalid {
				t.Errorf("02:30 on %s: err %v, want Invalid", spring, err)
			}
		}
	})
	t.Run("RepeatIsFirstOccurrence", func(t *testing.T) {
		want := time.Date(2027, time.October, 31, 0, 30, 0, 0, time.UTC) // 02:30 CEST
		got, err := staff.WallStart("time", loc, autumn, 2*60+30)
		if err != nil || !got.Equal(want) {
			t.Errorf("WallStart 02:30 on %s = %s, %v; want %s", autumn, got, err, want)
		}
		got, err = staff.ParseLocalTime("start", "2027-10-31T02:30", loc)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseLocalTime 02:30 on %s = %s, %v; want %s", autumn, got, err, want)
		}
	})
	t.Run("OrdinaryTime", func(t *testing.T) {
		got, err := staff.ParseLocalTime("start", "2027-06-15T09:30", loc)
		if want := time.Date(2027, time.June, 15, 7, 30, 0, 0, time.UTC); err != nil || !got.Equal(want) {
			t.Errorf("09:30 on 2027-06-15 = %s, %v; want %s", got, err, want)
		}
	})
	t.Run("Malformed", func(t *testing.T) {
		for _, s := range []string{"", "soon", "2027-06-15", "2027-06-15T9:30", "2027-06-15T24:00", "2027-02-30T09:00"} {
			if _, err := staff.ParseLocalTime("start", s, loc); apperr.As(err) == nil {
				t.Errorf("%q: err %v, want Invalid", s, err)
			}
		}
	})
}
