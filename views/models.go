package views

// ClinicVM is a clinic in the list.
type ClinicVM struct {
	Slug, Name, Address, Timezone string
}

// TypeVM is an appointment type on the clinic page.
type TypeVM struct {
	ID, Name, Description string
	DurationMin           int
	Specialists           []string
	BookURL               string
}

// ClinicPageVM is /c/{slug}.
type ClinicPageVM struct {
	Clinic ClinicVM
	Types  []TypeVM
}

// OptionVM is one choice of a select.
type OptionVM struct {
	Value, Label string
	Selected     bool
}

// BookingPageVM is the week grid page.
type BookingPageVM struct {
	Clinic      ClinicVM
	TypeName    string
	DurationMin int
	WeekLabel   string // "23 – 29 Nov 2026"
	PrevURL     string
	NextURL     string
	FilterURL   string // the form action of the specialist filter
	Week        string // YYYY-MM-DD
	Specialists []OptionVM
	Days        []DayVM
	StreamURL   string
	Panel       HoldPanelVM
	Heading     string // "Book" or "Move your appointment"
}

// HoldPanelVM is the side panel: what the patient holds and the details form.
type HoldPanelVM struct {
	State      string // "", "held", "problem"
	Message    string // for "problem", and notices above the form
	Retry      bool   // offer to pick again
	HoldID     string
	When       string // "Tuesday 24 November 2026, 10:00 (Europe/Berlin)"
	Specialist string
	ExpiresAt  string
	ConfirmURL string
	ReleaseURL string
	BeatURL    string
	HoldURL    string // to hold again after expiry
	Start      string // RFC 3339, for holding again
	Filter     string // the specialist filter, for holding again
	Name       string
	Email      string
	Phone      string
	Errors     map[string]string // field -> message
}

// ManageVM is the private page of one booking.
type ManageVM struct {
	Clinic        ClinicVM
	Token         string
	Status        string // confirmed, cancelled, rescheduled
	JustBooked    bool
	Notice        string
	TypeName      string
	When          string
	Ends          string
	Specialist    string
	Patient       string
	ManageURL     string
	ICSURL        string
	CancelURL     string
	RescheduleURL string
	Version       int32
}

// KioskVM is the waiting-room board.
type KioskVM struct {
	Clinic    ClinicVM
	Clock     string // initial local time
	Today     string
	StreamURL string
	Blocks    []KioskBlockVM
}

// KioskBlockVM is one type and specialist's free times over the next days.
type KioskBlockVM struct {
	ID         string
	TypeName   string
	Specialist string
	Days       []KioskDayVM
}

// KioskDayVM is one day's free times on the board.
type KioskDayVM struct {
	Label string
	Times []string
}
