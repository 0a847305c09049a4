package kiosk

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/stream"
)

// kioskDays is how many days the board shows: today and tomorrow.
const kioskDays = 2

// kioskSource is a clinic's board as a live source: one block per
// appointment type, with its earliest free times today and tomorrow
// across all its specialists and how many there are. It has nothing
// personal: a kiosk shows no patient data and no holds of its own.
type kioskSource struct {
	srv    *Board
	clinic clinics.Clinic
}

func (k kioskSource) Key() string         { return "kiosk|" + k.clinic.ID.String() + "|" + k.lang().Lang() }
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
		b, err := k.block(ctx, loc, today, t, lay.perDay())
		if err != nil {
			return kioskLayout{}, nil, err
		}
		out = append(out, b)
	}
	return lay, out, nil
}

// block is one type's board: on each day, the earliest free start times
// (each once, whichever specialists are free then), at most shown of
// them, and the number of appointments still free (a time two
// specialists are free at counts twice, so a hold on either shows).
func (k kioskSource) block(ctx context.Context, loc *time.Location, today availability.Date, t clinics.AppointmentType, shown int) (views.KioskBlockVM, error) {
	res, err := k.srv.deps.Slots.Free(ctx, slots.Request{
		AppointmentTypeID: t.ID, From: today, To: today.AddDays(kioskDays - 1),
	})
	if err != nil {
		return views.KioskBlockVM{}, err
	}
	b := views.KioskBlockVM{ID: kioskBlockID(t.ID), TypeName: t.Name, Days: make([]views.KioskDayVM, kioskDays)}
	for i := range b.Days {
		b.Days[i].Offset = i
	}
	for _, sl := range res.Slots {
		i := availability.DaysBetween(today, availability.DateOf(sl.Start, loc))
		if i < 0 || i >= kioskDays || len(sl.SpecialistIDs) == 0 {
			continue
		}
		d := &b.Days[i]
		d.Free += len(sl.SpecialistIDs)
		if hhmm := sl.Start.In(loc).Format("15:04"); len(d.Times) < shown && (len(d.Times) == 0 || d.Times[len(d.Times)-1] != hhmm) {
			d.Times = append(d.Times, hhmm)
		}
	}
	return b, nil
}

// kioskBlockID is the DOM id (and live event name) of a type's block.
func kioskBlockID(typeID uuid.UUID) string { return "kiosk-" + typeID.String() }

// lang is the board's language: the clinic's.
func (k kioskSource) lang() *i18n.Localizer { return i18n.For(k.clinic.Language) }

func (k kioskSource) Snapshot(ctx context.Context) ([]stream.Fragment, func(string) ([]stream.Fragment, bool), error) {
	ctx = i18n.WithLocalizer(ctx, k.lang())
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

// kioskClinic is the board's clinic. Once an admin has made device tokens
// for a clinic, its board opens only with one of them (?device=); before
// that it is public, having nothing private on it.
func (s *Board) kioskClinic(c echo.Context) (clinics.Clinic, error) {
	ctx := c.Request().Context()
	clinic, err := s.deps.Clinics.BySlug(ctx, c.Param("slug"))
	if err != nil {
		return clinics.Clinic{}, err
	}
	httpx.SpeakOnly(c, clinic.Language) // a refusal speaks the board's language too
	if ok, err := s.deps.Practice.KioskAllowed(ctx, clinic.ID, c.QueryParam("device")); err != nil {
		return clinics.Clinic{}, err
	} else if !ok {
		return clinics.Clinic{}, apperr.New(apperr.Forbidden, apperr.CodeKioskToken, "This screen needs a valid device link from the clinic's staff.")
	}
	return clinic, nil
}

// Kiosk answers GET /kiosk/:slug: the read-only board for a waiting room.
func (s *Board) Kiosk(c echo.Context) error {
	clinic, err := s.kioskClinic(c)
	if err != nil {
		return err
	}
	ctx, l := c.Request().Context(), httpx.Tr(c)
	lay, blocks, err := kioskSource{srv: s, clinic: clinic}.board(ctx)
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
		Clinic: httpx.ClinicVM(clinic), Clock: l.Time(now), Today: l.LongDay(now),
		StreamURL: "/kiosk/" + clinic.Slug + "/live" + deviceQuery(c.QueryParam("device")),
		Cols:      lay.cols, Rows: lay.rows, Blocks: blocks, BookURL: bookURL, BookQR: qrImage,
	}
	// No session, no cookies: a kiosk is nobody.
	return httpx.Render(c, http.StatusOK, views.Page(clinic.Name+" · "+l.T("kiosk.title", nil), s.deps.Assets), views.Kiosk(vm))
}

// KioskStream answers GET /kiosk/:slug/live.
func (s *Board) KioskStream(c echo.Context) error {
	clinic, err := s.kioskClinic(c)
	if err != nil {
		return err
	}
	// A revoked token (or a first token made for a board that was public)
	// ends the board's stream; the board then shows why on reload. Boards
	// are public: the boards of one clinic and token share one check.
	device := c.QueryParam("device")
	key := stream.AccessKey("kiosk", clinic.ID.String(), device)
	check := func(ctx context.Context) (bool, error) { return s.deps.Practice.KioskAllowed(ctx, clinic.ID, device) }
	access := func(ctx context.Context) bool { return s.live.Allowed(ctx, key, check) }
	return s.live.ServeHTMLStream(c, kioskSource{srv: s, clinic: clinic}, "kiosk:"+clinic.ID.String(), stream.Viewer{Access: access})
}

func deviceQuery(token string) string {
	if token == "" {
		return ""
	}
	return "?device=" + url.QueryEscape(token)
}

// qrDataURI draws text as a QR code (httpx.QRDataURI).
func qrDataURI(text string) (templ.SafeURL, error) { return httpx.QRDataURI(text) }

// The board's geometry. Every size on the board is a multiple of one unit
// u = min(1vh, 0.5625vw) (the stylesheet's --u), so the board is a 16:9
// canvas of 177.8u by 100u scaled to whatever screen it is on, and what
// fits at 1920x1080 fits at 1280x720 and on any other screen. The numbers
// here mirror the kiosk part of static/app.css; the browser test checks
// that they agree.
const (
	kioskAreaW = 140.8 // the blocks' area: the board less its padding, the booking panel and gaps
	kioskAreaH = 85.5  // the board less its padding, the header and a gap
	kioskGap   = 1.5   // between blocks
	kioskMaxC  = 6     // columns and rows of blocks at most
	kioskMaxR  = 6
	// Inside a block, in em of the block's font: padding across and down,
	// the type's name, one day's heading, one line of times, a time's
	// width and the gap between times.
	kioskPadX, kioskPadY = 1.6, 1.2
	kioskTitleEm         = 1.7
	kioskDayHeadEm       = 1.85
	kioskLineEm          = 1.5
	kioskTimeEm          = 3.6
	kioskTimeGapEm       = 0.3
	kioskSpareEm         = 0.4 // rounding, and a font wider than the one measured
	// kioskMaxPerDay keeps a board of one or two types to the next few
	// times, not the whole day.
	kioskMaxPerDay = 24
)

// Block font sizes in u, the smaller of the rows' and the columns' value
// (the stylesheet's --kr and --kc): small enough that two lines of times a
// day fit a block's height, and at least three times a line its width.
var (
	kioskFontRows = [kioskMaxR + 1]float64{0, 3.6, 3.0, 1.95, 1.45, 1.15, 0.95}
	kioskFontCols = [kioskMaxC + 1]float64{0, 10, 5.3, 3.5, 2.6, 2.05, 1.7}
)

// kioskLayout is the grid of a board's blocks.
type kioskLayout struct{ cols, rows int }

// layoutFor is the grid for n blocks with the largest type: of every
// grid with room for them, the one whose font is largest, then the one
// with the fewest empty places. Past 36 types the last blocks fall off
// the screen.
func layoutFor(n int) kioskLayout {
	best, bestFont, bestEmpty := kioskLayout{1, 1}, 0.0, 0
	for r := 1; r <= kioskMaxR; r++ {
		c := max(1, (n+r-1)/r)
		if c > kioskMaxC {
			continue
		}
		l := kioskLayout{c, r}
		if f, empty := l.font(), c*r-n; f > bestFont || (f == bestFont && empty < bestEmpty) {
			best, bestFont, bestEmpty = l, f, empty
		}
	}
	if bestFont == 0 {
		best = kioskLayout{kioskMaxC, kioskMaxR}
	}
	return best
}

// font is the blocks' font size in u.
func (l kioskLayout) font() float64 { return min(kioskFontRows[l.rows], kioskFontCols[l.cols]) }

// perDay is how many times of a day a block has room for: as many as
// fit on a line (at most ten), on as many lines as the block's height
// allows (one to four), and never more than kioskMaxPerDay.
func (l kioskLayout) perDay() int {
	f := l.font()
	w := (kioskAreaW-kioskGap*float64(l.cols-1))/float64(l.cols)/f - kioskPadX
	h := (kioskAreaH-kioskGap*float64(l.rows-1))/float64(l.rows)/f - kioskPadY - kioskTitleEm - kioskSpareEm
	perLine := int(math.Floor((w + kioskTimeGapEm) / (kioskTimeEm + kioskTimeGapEm)))
	lines := int(math.Floor((h/kioskDays - kioskDayHeadEm + kioskTimeGapEm) / (kioskLineEm + kioskTimeGapEm)))
	return min(min(max(perLine, 1), 10)*min(max(lines, 1), 4), kioskMaxPerDay)
}
