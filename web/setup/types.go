package setup

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// TypeList answers GET /staff/types.
func (s *Admin) TypeList(c echo.Context) error {
	types, err := s.deps.Practice.Types(c.Request().Context(), httpx.StaffUser(c))
	if err != nil {
		return err
	}
	lang := httpx.Tr(c).Lang()
	rows := make([]views.TypeVM, len(types))
	for i, t := range types {
		rows[i] = views.TypeVM{ID: t.ID.String(), Name: t.Translations.Name(lang, t.Name), DurationMin: int(t.DurationMin)}
	}
	return s.kit.Page(c, http.StatusOK, httpx.Tr(c).T("admin.types.title", nil), views.TypeList(s.kit.Nav(c, "types"), rows))
}

func (s *Admin) typeFormVM(c echo.Context, t practice.AppointmentType, chosen []uuid.UUID) (views.TypeFormVM, error) {
	sps, err := s.deps.Practice.Specialists(c.Request().Context(), httpx.StaffUser(c))
	if err != nil {
		return views.TypeFormVM{}, err
	}
	de := t.Translations[i18n.German]
	vm := views.TypeFormVM{Nav: s.kit.Nav(c, "types"), Name: t.Name, Description: t.Description,
		NameDe: de.Name, DescriptionDe: de.Description, Title: t.Translations.Name(httpx.Tr(c).Lang(), t.Name),
		DurationMin: t.DurationMin, SlotStepMin: t.SlotStepMin, BufferBeforeMin: t.BufferBeforeMin, BufferAfterMin: t.BufferAfterMin,
		MinNoticeMin: t.MinNoticeMin, MaxAdvanceDays: t.MaxAdvanceDays, CooldownMin: t.CooldownMin,
		MaxHoldsPerClient: t.MaxHoldsPerClient, ReminderHours: strconv.Itoa(int(t.ReminderMin / 60)),
		Version: t.Version, Errors: map[string]string{}}
	if t.ChangeDeadlineHours.Valid {
		vm.ChangeDeadlineHours = strconv.Itoa(int(t.ChangeDeadlineHours.Int32))
	}
	st, err := s.deps.Clinics.Settings(c.Request().Context(), httpx.StaffUser(c).ClinicID)
	if err == nil {
		vm.DefaultDeadlineHours = int(st.ChangeDeadlineHours)
	}
	if t.ID != uuid.Nil {
		vm.ID = t.ID.String()
	}
	for _, sp := range sps {
		checked := false
		for _, id := range chosen {
			checked = checked || id == sp.ID
		}
		vm.Specialists = append(vm.Specialists, views.CheckVM{Value: sp.ID.String(), Label: sp.Name, Checked: checked})
	}
	return vm, nil
}

// TypeNew answers GET /staff/types/new.
func (s *Admin) TypeNew(c echo.Context) error {
	if err := httpx.StaffUser(c).May(staff.ActTypes); err != nil {
		return err
	}
	// A new type starts from the clinic's defaults (the settings page).
	d, err := s.deps.Clinics.TypeDefaults(c.Request().Context(), httpx.StaffUser(c).ClinicID)
	if err != nil {
		return err
	}
	vm, err := s.typeFormVM(c, practice.AppointmentType{DurationMin: 30, SlotStepMin: d.SlotStepMin, MinNoticeMin: d.MinNoticeMin,
		MaxAdvanceDays: d.MaxAdvanceDays, CooldownMin: d.CooldownMin, MaxHoldsPerClient: 1,
		ReminderMin: practice.DefaultReminderHours * 60}, nil)
	if err != nil {
		return err
	}
	return s.kit.Page(c, http.StatusOK, httpx.Tr(c).T("admin.types.new", nil), views.TypeForm(vm))
}

// TypePage answers GET /staff/types/:id.
func (s *Admin) TypePage(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	t, chosen, err := s.deps.Practice.Type(c.Request().Context(), httpx.StaffUser(c), id)
	if err != nil {
		return err
	}
	vm, err := s.typeFormVM(c, t, chosen)
	if err != nil {
		return err
	}
	return s.kit.Page(c, http.StatusOK, vm.Title, views.TypeForm(vm))
}

// TypeSave answers POST /staff/types and POST /staff/types/:id.
func (s *Admin) TypeSave(c echo.Context) error {
	var id uuid.UUID
	if c.Param("id") != "" {
		var err error
		if id, err = httpx.ParseIDParam(c); err != nil {
			return err
		}
	}
	num := func(name string) int { n, _ := strconv.Atoi(strings.TrimSpace(c.FormValue(name))); return n }
	form, _ := c.FormParams()
	var chosen []uuid.UUID
	for _, v := range form["specialists"] {
		if sid, err := uuid.Parse(v); err == nil {
			chosen = append(chosen, sid)
		}
	}
	in := practice.TypeInput{
		Name: c.FormValue("name"), Description: c.FormValue("description"),
		DurationMin: num("durationMin"), SlotStepMin: num("slotStepMin"), BufferBeforeMin: num("bufferBeforeMin"),
		BufferAfterMin: num("bufferAfterMin"), MinNoticeMin: spanMinutes(c, "minNotice", "minNoticeMin"), MaxAdvanceDays: num("maxAdvanceDays"),
		CooldownMin: spanMinutes(c, "cooldown", "cooldownMin"), MaxHoldsPerClient: num("maxHoldsPerClient"),
		ReminderHours: reminderHours(form), SpecialistIDs: chosen, Version: httpx.Atoi32(c.FormValue("version")),
		Translations:   typeTranslations(form),
		ChangeDeadline: practice.KeepChangeDeadline,
	}
	if typed, sent := form["changeDeadlineHours"]; sent && len(typed) > 0 {
		in.ChangeDeadline = typed[0]
	}
	t, err := s.deps.Practice.SaveType(c.Request().Context(), httpx.StaffUser(c), id, in)
	if err == nil {
		return c.Redirect(http.StatusSeeOther, "/staff/types/"+t.ID.String())
	}
	if isStale(err) && id != uuid.Nil {
		cur, curChosen, lerr := s.deps.Practice.Type(c.Request().Context(), httpx.StaffUser(c), id)
		if lerr != nil {
			return lerr
		}
		vm, verr := s.typeFormVM(c, cur, curChosen)
		if verr != nil {
			return verr
		}
		vm.Stale = staleMessage(c, err)
		return s.kit.Page(c, http.StatusConflict, vm.Title, views.TypeForm(vm))
	}
	errs, err := fieldErrors(c, err)
	if err != nil {
		return err
	}
	vm, verr := s.typeFormVM(c, practice.AppointmentType{ID: id, Name: in.Name, Description: in.Description,
		DurationMin: int32(in.DurationMin), SlotStepMin: int32(in.SlotStepMin), BufferBeforeMin: int32(in.BufferBeforeMin),
		BufferAfterMin: int32(in.BufferAfterMin), MinNoticeMin: int32(in.MinNoticeMin), MaxAdvanceDays: int32(in.MaxAdvanceDays),
		CooldownMin: int32(in.CooldownMin), MaxHoldsPerClient: int32(in.MaxHoldsPerClient),
		ReminderMin: int32(in.ReminderHours * 60), Version: in.Version, Translations: in.Translations}, chosen)
	if verr != nil {
		return verr
	}
	if typed := form["reminderHours"]; len(typed) > 0 {
		vm.ReminderHours = typed[0]
	}
	if typed := form["changeDeadlineHours"]; len(typed) > 0 {
		vm.ChangeDeadlineHours = typed[0]
	}
	vm.Errors = errs
	return s.kit.Page(c, http.StatusUnprocessableEntity, httpx.Tr(c).T("admin.types.one", nil), views.TypeForm(vm))
}

// typeTranslations are the form's German name and description; nil when
// the form has no German fields (a script's post), which keeps the type's.
func typeTranslations(form url.Values) clinics.Translations {
	name, sent := form["nameDe"]
	if !sent {
		return nil
	}
	return clinics.Translations{i18n.German: {Name: name[0], Description: form.Get("descriptionDe")}}
}

// reminderHours is the form's reminder lead in hours: the default when the
// form has no such field, and -1 (out of range, so refused naming the
// field) when it holds anything but a whole number.
func reminderHours(form url.Values) int {
	v := form["reminderHours"]
	if len(v) == 0 {
		return practice.DefaultReminderHours
	}
	n, err := strconv.Atoi(strings.TrimSpace(v[0]))
	if err != nil {
		return -1
	}
	return n
}

// spanMinutes reads a length of time the form gives as a number and its
// unit (name and name+"Unit": min, h or d), or in minutes (inMinutes,
// as scripts post it, which wins). A number that is not one is -1, which the
// service refuses naming the field.
func spanMinutes(c echo.Context, name, inMinutes string) int {
	if m := strings.TrimSpace(c.FormValue(inMinutes)); m != "" {
		n, _ := strconv.Atoi(m)
		return n
	}
	raw, unit := strings.TrimSpace(c.FormValue(name)), c.FormValue(name+"Unit")
	if raw == "" {
		return 0
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 || n > 1000*24*60 {
		return -1
	}
	switch unit {
	case "h":
		return n * 60
	case "d":
		return n * 24 * 60
	}
	return n
}
