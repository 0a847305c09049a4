package views

// StaffNav is the staff header: who is signed in and the CSRF token every
// form and htmx request carries.
type StaffNav struct {
	Clinic  string
	Email   string
	IsAdmin bool
	CSRF    string
	Active  string
}

// CalendarVM is the live calendar.
type CalendarVM struct {
	Nav         StaffNav
	Timezone    string
	View        string // day or week
	Date        string
	Label       string
	PrevURL     string
	NextURL     string
	DayURL      string
	WeekURL     string
	Specialist  string
	Specialists []OptionVM
	Types       []OptionVM
	StreamURL   string
	Days        []CalendarDayVM
	Notice      string
	Error       string
}

// CalendarDayVM is one day block: its bookings, holds, overrides and free times.
type CalendarDayVM struct {
	ID        string
	Label     string
	Date      string
	Overrides []string
	Entries   []CalendarEntryVM
	Free      []CalendarFreeVM
}

// CalendarEntryVM is a booking or a live hold.
type CalendarEntryVM struct {
	Kind       string // booking, held
	Time       string
	End        string
	Patient    string
	Contact    string
	TypeName   string
	Specialist string
	ID         string
	Version    int32
	StartUTC   string
}

// CalendarFreeVM is one specialist's free times on a day.
type CalendarFreeVM struct {
	Specialist string
	Times      []string
}

// SpecialistRowVM is a specialist in the list.
type SpecialistRowVM struct {
	ID, Name string
	Priority int32
	Active   bool
}

// SpecialistEditVM is the specialist page: details, hours, overrides.
type SpecialistEditVM struct {
	Nav       StaffNav
	ID        string
	Name      string
	Priority  int32
	Active    bool
	Version   int32
	Hours     []HoursDayVM
	Overrides []OverrideVM
	Future    []string // the specialist's future bookings, when inactive
	Errors    map[string]string
	Notice    string
	Stale     string
}

// HoursDayVM is one weekday's ranges as text ("08:30-12:30, 13:30-17:00").
type HoursDayVM struct {
	Key, Label, Value string
}

// OverrideVM is a date override.
type OverrideVM struct {
	ID, Day, What, Note string
}

// TypeFormVM is the appointment type form.
type TypeFormVM struct {
	Nav                                          StaffNav
	ID, Name, Description                        string
	DurationMin, SlotStepMin, BufferBeforeMin    int32
	BufferAfterMin, MinNoticeMin, MaxAdvanceDays int32
	CooldownMin, MaxHoldsPerClient, Version      int32
	Specialists                                  []CheckVM
	Errors                                       map[string]string
	Stale                                        string
}

// CheckVM is a checkbox.
type CheckVM struct {
	Value, Label string
	Checked      bool
}

// AuditRowVM is one audit row.
type AuditRowVM struct {
	At, Actor, Action, Entity, EntityID, Before, After, Reason string
}

// AuditVM is the audit page.
type AuditVM struct {
	Nav           StaffNav
	Rows          []AuditRowVM
	Entity, Actor string
	From, To      string
	Page          int
	PrevURL       string
	NextURL       string
}

// TableVM is a simple list page (staff accounts, kiosk tokens, search).
type TableVM struct {
	Nav    StaffNav
	Title  string
	Head   []string
	Rows   [][]string
	Notice string
	Error  string
}
