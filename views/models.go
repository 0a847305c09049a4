package views

// The view models that several page families share. A model only one
// family uses is declared in that family's templ file, beside its
// component.

// ClinicVM is a clinic in the list.
type ClinicVM struct {
	Slug, Name, Address, Timezone string
	ContactPhone, ContactEmail    string // either may be empty
}

// TypeVM is an appointment type on the clinic page and in the staff list
// of types.
type TypeVM struct {
	ID, Name, Description string
	DurationMin           int
	Specialists           []string
	BookURL               string
}

// OptionVM is one choice of a select.
type OptionVM struct {
	Value, Label string
	Selected     bool
}

// StaffNav is the staff header: who is signed in and the CSRF token every
// form and htmx request carries.
type StaffNav struct {
	Clinic string
	Email  string
	CSRF   string
	Active string
}
