// The staff's blocks: a specialist's address and its linked accounts, the
// account's own address, and the clinic's choice of names.

package feeds

import (
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/feeds"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// SpecialistBlock is the specialist page's block ("" url: none to show).
func (h *Feeds) SpecialistBlock(c echo.Context, specialistID uuid.UUID) (templ.Component, error) {
	vm, err := h.specialistVM(c, specialistID)
	if err != nil {
		return nil, err
	}
	return views.FeedBlock(vm), nil
}

func (h *Feeds) specialistVM(c echo.Context, specialistID uuid.UUID) (views.FeedVM, error) {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	state, err := h.deps.Feeds.SpecialistFeed(ctx, u, specialistID)
	if err != nil {
		return views.FeedVM{}, err
	}
	vm := views.FeedVM{Nav: h.kit.Nav(c, "specialists"), Key: "specialist", Action: "/staff/specialists/" + specialistID.String() + "/feed",
		Since: h.since(c, state), Manage: u.May(staff.ActSpecialistsEdit) == nil, Link: true}
	linked, err := h.deps.Feeds.LinkedAccounts(ctx, u, specialistID)
	if err != nil {
		return vm, err
	}
	isLinked := map[uuid.UUID]bool{}
	for _, a := range linked {
		isLinked[a.ID] = true
		vm.Linked = append(vm.Linked, views.OptionVM{Value: a.ID.String(), Label: a.Email})
	}
	if u.May(staff.ActAccounts) == nil {
		accounts, err := h.deps.Staff.StaffUsers(ctx, u)
		if err != nil {
			return vm, err
		}
		for _, a := range accounts {
			if !isLinked[a.ID] && a.DisabledAt == nil {
				vm.Accounts = append(vm.Accounts, views.OptionVM{Value: a.ID.String(), Label: a.Email})
			}
		}
	}
	return vm, nil
}

// OwnBlock is the account page's block.
func (h *Feeds) OwnBlock(c echo.Context) (templ.Component, error) {
	vm, err := h.ownVM(c)
	if err != nil {
		return nil, err
	}
	return views.FeedBlock(vm), nil
}

func (h *Feeds) ownVM(c echo.Context) (views.FeedVM, error) {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	state, err := h.deps.Feeds.OwnFeed(ctx, u)
	if err != nil {
		return views.FeedVM{}, err
	}
	whose, err := h.deps.Feeds.OwnSpecialist(ctx, u)
	if err != nil {
		return views.FeedVM{}, err
	}
	l := httpx.Tr(c)
	vm := views.FeedVM{Nav: h.kit.Nav(c, "account"), Key: "own", Action: "/staff/account/feed", Since: h.since(c, state), Manage: true,
		Whose: l.T("feeds.whose.none", nil)}
	if whose != "" {
		vm.Whose = l.T("feeds.whose", map[string]any{"Specialist": whose})
	}
	return vm, nil
}

// NamesBlock is the settings page's block, for those who may change the
// settings (nothing for others).
func (h *Feeds) NamesBlock(c echo.Context) (templ.Component, error) {
	u := httpx.StaffUser(c)
	if u.May(staff.ActSettings) != nil {
		return templ.NopComponent, nil
	}
	on, err := h.deps.Feeds.Names(c.Request().Context(), u)
	if err != nil {
		return nil, err
	}
	return views.FeedNamesSetting(views.FeedNamesVM{Nav: h.kit.Nav(c, "settings"), On: on}), nil
}

// since is when state's address was made, in the clinic's zone and the
// page's language ("": none works).
func (h *Feeds) since(c echo.Context, state feeds.State) string {
	if state.Since == nil {
		return ""
	}
	loc, _ := h.deps.Slots.Zone(c.Request().Context(), httpx.StaffUser(c).ClinicID)
	if loc == nil {
		loc = time.UTC
	}
	t := state.Since.In(loc)
	l := httpx.Tr(c)
	return l.DayMonthYear(t) + " " + l.Time(t)
}

// SpecialistFeed answers POST /staff/specialists/:id/feed (action: new or
// revoke) with the block: a new address shown this once, or none.
func (h *Feeds) SpecialistFeed(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	return h.change(c, func() (string, error) {
		if c.FormValue("action") == "revoke" {
			return "", h.deps.Feeds.RevokeSpecialistFeed(ctx, u, id)
		}
		return h.deps.Feeds.NewSpecialistFeed(ctx, u, id)
	}, func() (views.FeedVM, error) { return h.specialistVM(c, id) })
}

// OwnFeed answers POST /staff/account/feed (action: new or revoke).
func (h *Feeds) OwnFeed(c echo.Context) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	return h.change(c, func() (string, error) {
		if c.FormValue("action") == "revoke" {
			return "", h.deps.Feeds.RevokeOwnFeed(ctx, u)
		}
		return h.deps.Feeds.NewOwnFeed(ctx, u)
	}, func() (views.FeedVM, error) { return h.ownVM(c) })
}

// change makes or stops an address and answers with the block: the new
// address shown once, or what went wrong in place.
func (h *Feeds) change(c echo.Context, do func() (token string, err error), vmOf func() (views.FeedVM, error)) error {
	token, err := do()
	status := http.StatusOK
	problem := ""
	if err != nil {
		ae := apperr.As(err)
		if ae == nil || (ae.Kind != apperr.NotFound && ae.Kind != apperr.Invalid) {
			return err
		}
		problem = ae.Message
	}
	vm, err := vmOf()
	if err != nil {
		return err
	}
	vm.Problem = problem
	switch {
	case token != "":
		status = http.StatusCreated
		// The answer carries the address: keep it out of referrers.
		c.Response().Header().Set("Referrer-Policy", "no-referrer")
		vm.URL = h.kit.PublicBase(c) + "/calendar/" + token + ".ics"
		vm.Webcal = webcal(vm.URL)
	case problem == "" && c.FormValue("action") == "revoke":
		vm.Notice = httpx.Tr(c).T("feeds.revoked", nil)
	}
	return h.block(c, status, vm)
}

// webcal is an http(s) address as the webcal:// link that calendar apps
// open as a subscription.
func webcal(url string) string {
	if rest, ok := strings.CutPrefix(url, "https://"); ok {
		return "webcal://" + rest
	}
	return "webcal://" + strings.TrimPrefix(url, "http://")
}

// block answers with the block alone to htmx, in the staff frame otherwise.
func (h *Feeds) block(c echo.Context, status int, vm views.FeedVM) error {
	body := views.FeedBlock(vm)
	if c.Request().Header.Get("HX-Request") != "true" {
		body = httpx.TemplChildren(views.StaffFrame(vm.Nav), body)
	}
	return h.kit.Page(c, status, httpx.Tr(c).T("feeds.title", nil), body)
}

// SpecialistLink answers POST /staff/specialists/:id/feed/link (account,
// action: link or unlink) with the block: 200 when done, 422 with the
// problem beside the field when the account is missing or not the clinic's.
func (h *Feeds) SpecialistLink(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	problem := ""
	account, perr := uuid.Parse(c.FormValue("account"))
	switch {
	case perr != nil:
		problem = httpx.Tr(c).T("feeds.linked.choose", nil)
	case c.FormValue("action") == "unlink":
		err = h.deps.Feeds.UnlinkAccount(ctx, u, account)
	default:
		err = h.deps.Feeds.LinkAccount(ctx, u, id, account)
	}
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.NotFound {
		problem, err = ae.Message, nil
	}
	if err != nil {
		return err
	}
	vm, err := h.specialistVM(c, id)
	if err != nil {
		return err
	}
	vm.Problem = problem
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	return h.block(c, status, vm)
}

// NamesSave answers POST /staff/settings/feeds (names: on or absent) and
// goes back to the settings page.
func (h *Feeds) NamesSave(c echo.Context) error {
	if err := h.deps.Feeds.SetNames(c.Request().Context(), httpx.StaffUser(c), c.FormValue("names") == "on"); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/staff/settings")
}
