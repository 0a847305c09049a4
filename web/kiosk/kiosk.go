package kiosk

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/stream"
)

// The board shows today's and tomorrow's free times (kioskDays), and
// below them, as room allows, the first free time of each later day of
// the week ahead (kioskAhead days in all, counting today).
const (
	kioskDays  = 2
	kioskAhead = 8
)

// kioskSource is a clinic's board as a live source: one block per
// appointment type, with its earliest free times today and tomorrow
// across all its specialists and how many there are, and the first free
// time of the next days, in the board's languages. It has nothing
// personal: a kiosk shows no patient data and no holds of its own.
type kioskSource struct {
	srv    *Board
	clinic clinics.Clinic
	langs  []string
}

func (k kioskSource) Key() string {
	return "kiosk|" + k.clinic.ID.String() + "|" + strings.Join(k.langs, "-")
}
func (k kioskSource) ClinicID() uuid.UUID { return k.clinic.ID }

// board is the clinic's blocks and the layout that fits them on a screen.
func (k kioskSource) board(ctx context.Context) (kioskLayout, []views.KioskBlockVM, error) {
	loc, err := k.srv.deps.Slots.Zone(ctx, k.clinic.ID)
	if err != nil {
		return kioskLayout{}, nil, err
	}
	types, err := k.srv.deps.Clinics.AppointmentTypes(ctx, k.clinic.ID)
	if err != nil {
		return kioskLayout{}, nil, err
	}
	lay := layoutFor(len(types))
	today := availability.DateOf(time.Now(), loc)
	out := make([]views.KioskBlockVM, 0, len(types))
	for _, t := range types {
		names := make(map[string]string, len(k.langs))
		for _, l := range k.langs {
			names[l] = t.NameIn(l)
		}
		b, err := k.block(ctx, loc, today, t.ID, lay.fit(slices.Collect(maps.Values(names))...))
		if err != nil {
			return kioskLayout{}, nil, err
		}
		b.Langs, b.Names = k.langs, names
		out = append(out, b)
	}
	return lay, out, nil
}

// block is one type's board: on each of today and tomorrow, the earliest
// free start times (each once, whichever specialists are free then), as
// many as the block has room for, and the number of appointments still
// free (a time two specialists are free at counts twice, so a hold on
// either shows); then, in the room left, each later day's first free
// time.
func (k kioskSource) block(ctx context.Context, loc *time.Location, today availability.Date, typeID uuid.UUID, room kioskFit) (views.KioskBlockVM, error) {
	res, err := k.srv.deps.Slots.Free(ctx, slots.Request{
		AppointmentTypeID: typeID, From: today, To: today.AddDays(kioskAhead - 1),
	})
	if err != nil {
		return views.KioskBlockVM{}, err
	}
	b := views.KioskBlockVM{ID: kioskBlockID(typeID), Days: make([]views.KioskDayVM, kioskDays)}
	for i := range b.Days {
		b.Days[i].Offset = i
	}
	var ahead []views.KioskAheadVM
	lastAhead := -1
	for _, sl := range res.Slots {
		i := availability.DaysBetween(today, availability.DateOf(sl.Start, loc))
		if i < 0 || i >= kioskAhead || len(sl.SpecialistIDs) == 0 {
			continue
		}
		start := sl.Start.In(loc)
		if i >= kioskDays {
			if i != lastAhead {
				ahead, lastAhead = append(ahead, views.KioskAheadVM{Date: start, First: start.Format("15:04")}), i
			}
			ahead[len(ahead)-1].Free += len(sl.SpecialistIDs)
			continue
		}
		d := &b.Days[i]
		d.Free += len(sl.SpecialistIDs)
		if hhmm := start.Format("15:04"); len(d.Times) < room.perDay() && (len(d.Times) == 0 || d.Times[len(d.Times)-1] != hhmm) {
			d.Times = append(d.Times, hhmm)
		}
	}
	shown := make([]int, len(b.Days))
	for i, d := range b.Days {
		shown[i] = len(d.Times)
	}
	if n := room.aheadLines(shown); n > 0 {
		b.AheadRoom, b.Ahead = true, ahead[:min(n, len(ahead))]
	}
	return b, nil
}

// kioskBlockID is the DOM id (and live event name) of a type's block.
func kioskBlockID(typeID uuid.UUID) string { return "kiosk-" + typeID.String() }

func (k kioskSource) Snapshot(ctx context.Context) ([]stream.Fragment, func(string) ([]stream.Fragment, bool), error) {
	ctx = i18n.WithLocalizer(ctx, i18n.For(k.langs[0]))
	_, blocks, err := k.board(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := make([]stream.Fragment, len(blocks))
	for i, b := range blocks {
		var buf bytes.Buffer
		if err := views.KioskBlock(b, true).Render(ctx, &buf); err != nil {
			return nil, nil, err
		}
		out[i] = stream.Fragment{ID: b.ID, HTML: buf.String()}
	}
	return out, func(string) ([]stream.Fragment, bool) { return nil, false }, nil
}

// Kiosk answers GET /kiosk/:slug: the read-only board for a waiting room.
func (s *Board) Kiosk(c echo.Context) error {
	scr, err := s.kioskScreen(c)
	if err != nil {
		return err
	}
	clinic := scr.clinic
	ctx, l := c.Request().Context(), httpx.Tr(c)
	lay, blocks, err := kioskSource{srv: s, clinic: clinic, langs: scr.langs}.board(ctx)
	if err != nil {
		return err
	}
	loc, _ := s.deps.Slots.Zone(ctx, clinic.ID)
	now := time.Now().In(loc)
	bookURL := s.kit.PublicBase(c) + "/c/" + clinic.Slug
	qrImage, err := qrDataURI(bookURL)
	if err != nil {
		// Only an address too long for a QR code gets here (a made-up Host
		// header without PUBLIC_URL): the board shows the address as text.
		httpx.LoggerFrom(c).Warn("kiosk: no QR code for the booking page", "clinic", clinic.Slug, "bytes", len(bookURL))
		qrImage = ""
	}
	vm := views.KioskVM{
		Clinic: httpx.ClinicVM(clinic), Langs: scr.langs, Every: kioskEvery, Clock: l.Time(now), Now: now,
		StreamURL: "/kiosk/" + clinic.Slug + "/live" + scr.streamQuery(),
		Cols:      lay.cols, Rows: lay.rows, Blocks: blocks, BookURL: bookURL, BookQR: qrImage,
	}
	// No session, no cookies: a kiosk is nobody.
	return httpx.Render(c, http.StatusOK, views.Page(clinic.Name+" · "+l.T("kiosk.title", nil), s.deps.Assets), views.Kiosk(vm))
}

// KioskStream answers GET /kiosk/:slug/live.
func (s *Board) KioskStream(c echo.Context) error {
	scr, err := s.kioskScreen(c)
	if err != nil {
		return err
	}
	if err := scr.sameLanguages(c.QueryParam("lang")); err != nil {
		return err
	}
	clinic := scr.clinic
	// A revoked token (or a first token made for a board that was public)
	// ends the board's stream, and so does a new language for the screen;
	// the board then reloads, and shows why or speaks the new language.
	// Boards are public: the boards of one clinic, token and language
	// share one check.
	device, langs := c.QueryParam("device"), strings.Join(scr.langs, "-")
	key := stream.AccessKey("kiosk", clinic.ID.String()+"|"+langs, device)
	check := func(ctx context.Context) (bool, error) {
		ok, lang, err := s.deps.Practice.KioskScreen(ctx, clinic.ID, device)
		return ok && strings.Join(boardLangs(clinic.Language, lang), "-") == langs, err
	}
	access := func(ctx context.Context) bool { return s.live.Allowed(ctx, key, check) }
	return s.live.ServeHTMLStream(c, kioskSource{srv: s, clinic: clinic, langs: scr.langs}, "kiosk:"+clinic.ID.String(), stream.Viewer{Access: access})
}

// qrDataURI draws text as a QR code (httpx.QRDataURI).
func qrDataURI(text string) (templ.SafeURL, error) { return httpx.QRDataURI(text) }
