package availability

import (
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	valid := []struct {
		in   string
		want Date
	}{
		{"2026-03-29", Date{2026, time.March, 29}},
		{"2028-02-29", Date{2028, time.February, 29}},
		{"0001-01-01", Date{1, time.January, 1}},
		{"9999-12-31", Date{9999, time.December, 31}},
	}
	for _, tt := range valid {
		t.Run("accepts "+tt.in, func(t *testing.T) {
			got, err := ParseDate(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("ParseDate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}

	invalid := []struct{ name, in string }{
		{"empty", ""},
		{"a day that does not exist", "2026-02-29"},
		{"day 31 of a 30-day month", "2026-04-31"},
		{"month 13", "2026-13-01"},
		{"month 0", "2026-00-10"},
		{"day 0", "2026-01-00"},
		{"year 0", "0000-01-01"},
		{"single-digit fields", "2026-3-29"},
		{"a signed year", "+026-03-29"},
		{"a signed month", "2026-+3-29"},
		{"slashes", "2026/03/29"},
		{"a trailing time", "2026-03-29T00:00"},
		{"trailing space", "2026-03-29 "},
		{"a five-digit year", "20260-03-29"},
	}
	for _, tt := range invalid {
		t.Run("rejects "+tt.name, func(t *testing.T) {
			if got, err := ParseDate(tt.in); err == nil {
				t.Errorf("ParseDate(%q) = %v, want an error", tt.in, got)
			}
		})
	}
}

func TestDateArithmetic(t *testing.T) {
	d := func(s string) Date { return mustDate(t, s) }

	t.Run("AddDays crosses month, year and leap-day boundaries", func(t *testing.T) {
		tests := []struct {
			from string
			n    int
			want string
		}{
			{"2026-03-29", 1, "2026-03-30"},
			{"2026-01-31", 1, "2026-02-01"},
			{"2026-12-31", 1, "2027-01-01"},
			{"2028-02-28", 1, "2028-02-29"},
			{"2028-03-01", -1, "2028-02-29"},
			{"2026-03-01", -1, "2026-02-28"},
			{"2026-03-02", 28, "2026-03-30"},
			{"2026-03-02", 0, "2026-03-02"},
		}
		for _, tt := range tests {
			if got := d(tt.from).AddDays(tt.n).String(); got != tt.want {
				t.Errorf("%s + %d days = %s, want %s", tt.from, tt.n, got, tt.want)
			}
		}
	})

	t.Run("Weekday follows the calendar", func(t *testing.T) {
		tests := map[string]time.Weekday{
			"2026-03-02": time.Monday,
			"2026-03-29": time.Sunday,
			"2026-01-01": time.Thursday,
			"2028-02-29": time.Tuesday,
		}
		for s, want := range tests {
			if got := d(s).Weekday(); got != want {
				t.Errorf("%s is a %v, want %v", s, got, want)
			}
		}
	})

	t.Run("Before orders by year, then month, then day", func(t *testing.T) {
		tests := []struct {
			a, b string
			want bool
		}{
			{"2026-03-01", "2026-03-02", true},
			{"2026-02-28", "2026-03-01", true},
			{"2025-12-31", "2026-01-01", true},
			{"2026-03-02", "2026-03-02", false},
			{"2026-03-02", "2026-03-01", false},
			{"2027-01-01", "2026-12-31", false},
		}
		for _, tt := range tests {
			if got := d(tt.a).Before(d(tt.b)); got != tt.want {
				t.Errorf("%s.Before(%s) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		}
	})

	t.Run("DaysBetween counts calendar days, even across a daylight-saving change", func(t *testing.T) {
		tests := []struct {
			a, b string
			want int
		}{
			{"2026-03-28", "2026-03-30", 2},
			{"2026-03-30", "2026-03-28", -2},
			{"2026-01-01", "2027-01-01", 365},
			{"2028-01-01", "2029-01-01", 366},
			{"1969-12-31", "1970-01-02", 2},
			{"2026-10-25", "2026-10-25", 0},
		}
		for _, tt := range tests {
			if got := DaysBetween(d(tt.a), d(tt.b)); got != tt.want {
				t.Errorf("DaysBetween(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
		}
	})

	t.Run("DateOf reads the date on the zone's wall clock", testDateOfReadsTheWallClock)

	t.Run("DateOf with a nil zone means UTC", func(t *testing.T) {
		at := mustTime(t, "2026-03-28T23:30:00-02:00")
		if got := DateOf(at, nil).String(); got != "2026-03-29" {
			t.Errorf("DateOf(%v, nil) = %s, want 2026-03-29", at, got)
		}
	})
}

func testDateOfReadsTheWallClock(t *testing.T) {
	tests := []struct {
		instant, zone, want string
	}{
		{"2026-03-28T23:30:00Z", "Europe/Berlin", "2026-03-29"},
		{"2026-03-28T22:59:59Z", "Europe/Berlin", "2026-03-28"},
		{"2026-11-01T04:30:00Z", "America/New_York", "2026-11-01"},
		{"2026-11-01T03:59:00Z", "America/New_York", "2026-10-31"},
		{"2026-04-04T13:00:00Z", "Australia/Lord_Howe", "2026-04-05"},
		{"2026-03-28T18:30:00Z", "Asia/Kolkata", "2026-03-29"},
	}
	for _, tt := range tests {
		if got := DateOf(mustTime(t, tt.instant), mustZone(t, tt.zone)).String(); got != tt.want {
			t.Errorf("DateOf(%s, %s) = %s, want %s", tt.instant, tt.zone, got, tt.want)
		}
	}
}
