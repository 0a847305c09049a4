package setup

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// The clinic settings page (admins): GET shows the form, POST saves it. A
// stale save is 409 with the current values; a bad field is 400 with its
// message in place; a new zone while bookings lie ahead first answers a
// confirmation page and is saved only when it comes back confirmed.

// settingsNav is the staff header of the settings pages; the role table
// already allowed the viewer the settings.
func (s *Admin) settingsNav(c echo.Context) views.StaffNav {
	nav := s.kit.Nav(c, "settings")
	ctx := c.Request().Context()
	can := httpx.StaffCan(httpx.StaffUser(c))
	can.Settings = true
	c.SetRequest(c.Request().WithContext(views.WithStaffCan(ctx, can)))
	return nav
}

func settingsVM(c echo.Context, nav views.StaffNav, st clinics.Settings) views.SettingsVM {
	others, zones := zoneChoices(httpx.Tr(c), st.Timezone, time.Now())
	return views.SettingsVM{
		OtherZones: others, Zones: zones,
		Nav: nav, Name: st.Name, Address: st.Address, ContactPhone: st.ContactPhone, ContactEmail: st.ContactEmail,
		Language: st.Language, Timezone: st.Timezone, Country: st.Country, Languages: clinics.Languages,
		SlotStepMin: st.Defaults.SlotStepMin, MinNoticeMin: st.Defaults.MinNoticeMin,
		MaxAdvanceDays: st.Defaults.MaxAdvanceDays, CooldownMin: st.Defaults.CooldownMin,
		Verification: st.Verification, Verifications: clinics.Verifications,
		RetentionMonths: st.Privacy.RetentionMonths, MailRetentionDays: st.Privacy.MailRetentionDays,
		ControllerName: st.Privacy.ControllerName, PrivacyContact: st.Privacy.Contact,
		ChangeDeadlineHours: st.ChangeDeadlineHours,
		Version:             st.Version, Errors: map[string]string{},
	}
}

// SettingsPage answers GET /staff/settings.
func (s *Admin) SettingsPage(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActSettings); err != nil {
		return err
	}
	st, err := s.deps.Practice.ClinicSettings(c.Request().Context(), u)
	if err != nil {
		return err
	}
	vm := settingsVM(c, s.settingsNav(c), st)
	vm.Saved = c.QueryParam("saved") != ""
	if vm.Feeds, err = s.deps.NamesBlock(c); err != nil {
		return err
	}
	return s.kit.Page(c, http.StatusOK, httpx.Tr(c).T("admin.settings.title", nil), views.Settings(vm))
}

// settingsForm reads the posted settings. A number that is not one reads
// as -1, which every range refuses naming its field; a retention period
// left out (a form from before it) reads as 0, which keeps the clinic's,
// and one typed as 0 as -1.
func settingsForm(c echo.Context) clinics.Settings {
	num := func(name string) int32 {
		n, err := strconv.ParseInt(strings.TrimSpace(c.FormValue(name)), 10, 32)
		if err != nil {
			return -1
		}
		return int32(n)
	}
	period := func(name string) int32 {
		v := c.FormValue(name)
		if _, sent := c.Request().PostForm[name]; !sent && v == "" {
			return 0
		}
		if n := num(name); n != 0 {
			return n
		}
		return -1
	}
	// A length of time comes as a number and its unit, or in minutes (a
	// script's post, or the zone confirmation's); not a number is -1.
	span := func(name, inMinutes string) int32 {
		if m := strings.TrimSpace(c.FormValue(inMinutes)); m != "" {
			return num(inMinutes)
		}
		return int32(spanMinutes(c, name, inMinutes))
	}
	return clinics.Settings{
		Name: c.FormValue("name"), Address: c.FormValue("address"),
		ContactPhone: c.FormValue("contactPhone"), ContactEmail: c.FormValue("contactEmail"),
		Language: c.FormValue("language"), Timezone: c.FormValue("timezone"), Country: c.FormValue("country"),
		Verification: c.FormValue("verification"),
		Privacy: clinics.Privacy{
			RetentionMonths: period("retentionMonths"), MailRetentionDays: period("mailRetentionDays"),
			ControllerName: c.FormValue("controllerName"), Contact: c.FormValue("privacyContact"),
		},
		Defaults: clinics.TypeDefaults{
			SlotStepMin: num("defaultSlotStepMin"), MinNoticeMin: span("defaultMinNotice", "defaultMinNoticeMin"),
			MaxAdvanceDays: num("defaultMaxAdvanceDays"), CooldownMin: span("defaultCooldown", "defaultCooldownMin"),
		},
		ChangeDeadlineHours: changeDeadline(c),
		Version:             httpx.Atoi32(c.FormValue("version")),
	}
}

// changeDeadline reads the settings' change deadline: one left out (a form
// from before it) keeps the clinic's, one that is not a number reads as
// -2, which the range refuses naming the field.
func changeDeadline(c echo.Context) int32 {
	const field = "changeDeadlineHours"
	if _, sent := c.Request().PostForm[field]; !sent {
		return clinics.KeepChangeDeadline
	}
	n, err := strconv.ParseInt(strings.TrimSpace(c.FormValue(field)), 10, 32)
	if err != nil {
		return -2
	}
	return int32(n)
}

// SettingsSave answers POST /staff/settings.
func (s *Admin) SettingsSave(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActSettings); err != nil {
		return err
	}
	ctx := c.Request().Context()
	in := settingsForm(c)
	res, err := s.deps.Practice.SaveClinicSettings(ctx, u, in, c.FormValue("confirmZone") == "yes")
	switch {
	case err == nil && res.Pending != nil:
		return s.kit.Page(c, http.StatusOK, httpx.Tr(c).T("admin.zone_confirm.title", nil), views.SettingsZoneConfirm(zoneConfirmVM(c, s.settingsNav(c), in, res.Pending)))
	case err == nil:
		// The clinic's name, address, contact and language show on its
		// public pages, which every instance may keep: all are retired.
		if res.ZoneChanged {
			s.deps.SetupChanges.ZoneChanged(context.WithoutCancel(ctx), u.ClinicID, res)
		} else {
			s.deps.SetupChanges.Changed(context.WithoutCancel(ctx), u.ClinicID)
		}
		return c.Redirect(http.StatusSeeOther, "/staff/settings?saved=1")
	case isStale(err):
		cur, lerr := s.deps.Practice.ClinicSettings(ctx, u)
		if lerr != nil {
			return lerr
		}
		vm := settingsVM(c, s.settingsNav(c), cur)
		vm.Stale = staleMessage(c, err)
		return s.kit.Page(c, http.StatusConflict, httpx.Tr(c).T("admin.settings.title", nil), views.Settings(vm))
	}
	errs, err := fieldErrors(c, err)
	if err != nil {
		return err
	}
	vm := settingsVM(c, s.settingsNav(c), in)
	vm.Errors = errs
	return s.kit.Page(c, http.StatusBadRequest, httpx.Tr(c).T("admin.settings.title", nil), views.Settings(vm))
}

// zoneConfirmVM shows the bookings ahead in the old zone and the new one,
// each zone as people say it, each time in the reader's words.
func zoneConfirmVM(c echo.Context, nav views.StaffNav, in clinics.Settings, ch *clinics.ZoneChange) views.ZoneConfirmVM {
	l := httpx.Tr(c)
	vm := views.ZoneConfirmVM{Form: settingsVM(c, nav, in), From: l.Zone(ch.From), To: l.Zone(ch.To), Count: ch.Count}
	at := func(t time.Time) string { return l.Day(t) + " " + l.Time(t) }
	for _, ex := range ch.Examples {
		vm.Examples = append(vm.Examples, views.ZoneMoveVM{Was: at(ex.Was), Becomes: at(ex.Becomes)})
	}
	return vm
}
