package patient

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// PrivacyPage answers GET /c/:slug/privacy: who answers for the patients'
// data, what the clinic keeps and for how long (its retention settings),
// and whom to ask for a copy or erasure.
func (s *Pages) PrivacyPage(c echo.Context) error {
	clinic, err := s.deps.Clinics.BySlug(c.Request().Context(), c.Param("slug"))
	if err != nil {
		return err
	}
	l := httpx.Speak(c, clinic.Language)
	p := clinic.Privacy
	vm := views.PrivacyPageVM{
		Clinic: httpx.ClinicVM(clinic), Controller: clinic.Name, Contact: p.Contact,
		Months: int(p.RetentionMonths), Days: int(p.MailRetentionDays),
	}
	if p.ControllerName != "" {
		vm.Controller = p.ControllerName
	}
	// Asked of the data-protection contact when the clinic named one,
	// else of the clinic's own contact, else of the clinic in person.
	var at []string
	for _, v := range []string{p.Contact, clinic.ContactEmail, clinic.ContactPhone} {
		if v != "" {
			at = append(at, v)
			if v == p.Contact {
				break
			}
		}
	}
	vm.AskAt = strings.Join(at, ", ")
	if vm.AskAt == "" {
		vm.AskAt = clinic.Name
		if clinic.Address != "" {
			vm.AskAt += ", " + clinic.Address
		}
	}
	return s.kit.Page(c, http.StatusOK, l.T("privacy.title", map[string]any{"Clinic": clinic.Name}), views.PrivacyPage(vm))
}
