package clinics

// The clinic's answer for its patients' data: how long it keeps it, and
// who the patients ask about it. Part of the settings page; shown to
// patients on the privacy page.

import (
	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/textfield"
)

// The retention settings' ranges (the database checks the same) and the
// defaults of a clinic made without the server's own.
const (
	MinRetentionMonths, MaxRetentionMonths           = 1, 120
	MinMailRetentionDays, MaxMailRetentionDays       = 1, 365
	DefaultRetentionMonths, DefaultMailRetentionDays = 12, 30
)

var (
	controllerField = textfield.Field{Name: "controllerName", Label: "The controller's name", Max: 200}
	contactField    = textfield.Field{Name: "privacyContact", Label: "The data-protection contact", Max: 300}
)

// Privacy is how long a clinic keeps its patients' details and who
// answers for them.
type Privacy struct {
	// RetentionMonths: a booking keeps its patient's details this long
	// after the appointment ends.
	RetentionMonths int32 `json:"retentionMonths"`
	// MailRetentionDays: stored e-mails and the queue's records of them
	// are kept this long after sending.
	MailRetentionDays int32 `json:"mailRetentionDays"`
	// ControllerName is who answers for the data when it is not the
	// clinic by its name (a practice's legal owner); empty: the clinic.
	ControllerName string `json:"controllerName"`
	// Contact is the data-protection contact (a person, an address);
	// empty: the clinic's own contact.
	Contact string `json:"privacyContact"`
}

func privacyFromRow(r db.Clinic) Privacy {
	return Privacy{RetentionMonths: r.RetentionMonths, MailRetentionDays: r.MailRetentionDays,
		ControllerName: r.ControllerName, Contact: r.PrivacyContact}
}

// check cleans p's text and validates its periods; a zero period (a form
// from before the field) keeps the clinic's.
//
// Errors: INVALID_ARGUMENT naming the first bad field.
func (p *Privacy) check() error {
	if p.RetentionMonths != 0 && (p.RetentionMonths < MinRetentionMonths || p.RetentionMonths > MaxRetentionMonths) {
		return apperr.Invalidf("retentionMonths", "Patient details are kept from %d to %d months after the appointment.", MinRetentionMonths, MaxRetentionMonths)
	}
	if p.MailRetentionDays != 0 && (p.MailRetentionDays < MinMailRetentionDays || p.MailRetentionDays > MaxMailRetentionDays) {
		return apperr.Invalidf("mailRetentionDays", "Sent e-mails are kept from %d to %d days.", MinMailRetentionDays, MaxMailRetentionDays)
	}
	var err error
	if p.ControllerName, err = controllerField.Check(p.ControllerName); err != nil {
		return err
	}
	p.Contact, err = contactField.Check(p.Contact)
	return err
}

// keepUnset fills the periods p leaves at zero from before.
func (p *Privacy) keepUnset(before Privacy) {
	if p.RetentionMonths == 0 {
		p.RetentionMonths = before.RetentionMonths
	}
	if p.MailRetentionDays == 0 {
		p.MailRetentionDays = before.MailRetentionDays
	}
}
