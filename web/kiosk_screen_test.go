package web_test

// The kiosk board on a real screen: in headless Chromium at 1920x1080 and
// 1280x720, for a clinic the size of the demo's and for one of twenty
// specialists and many types, the board fits the window without
// scrolling, no block's content is cut, and the QR code that says where
// to book is there. And the board's counts follow a hold live.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// kioskTypeBlockID is the DOM id of typ's block on the kiosk board.
func kioskTypeBlockID(typ db.AppointmentType) string { return "kiosk-" + typ.ID.String() }

// kioskFree is a block's number of free appointments on each day.
func kioskFree(t *testing.T, block *goquery.Selection) []int {
	t.Helper()
	var out []int
	block.Find(`.kiosk-day [data-testid="kiosk-count"]`).Each(func(_ int, s *goquery.Selection) {
		n, err := strconv.Atoi(s.AttrOr("data-free", ""))
		if err != nil {
			t.Fatalf("kiosk count %q: %v", s.AttrOr("data-free", ""), err)
		}
		out = append(out, n)
	})
	return out
}

// kioskFreeIs is a JavaScript condition: the kiosk block's count of free
// appointments on its day-th day is n.
func kioskFreeIs(blockID string, day, n int) string {
	return fmt.Sprintf(`(() => {
		const b = document.getElementById(%q);
		const c = b && b.querySelectorAll('.kiosk-day [data-testid="kiosk-count"]')[%d];
		return !!c && c.dataset.free === %q;
	})()`, blockID, day, strconv.Itoa(n))
}

// kioskFitClinic is a clinic whose clock stands at about 10:00 now (a
// fixed-offset zone chosen for it), open every day 09:00-17:00, so both
// of the board's days are full of free times whenever the test runs: the
// most the board ever has to show.
func (a *app) kioskFitClinic(t *testing.T, specialists int, types []db.AppointmentTypeInsertParams) clinic {
	t.Helper()
	hour := time.Now().UTC().Hour()
	offset := hour - 10 // Etc/GMT+N is N hours behind UTC
	if offset > 12 {
		offset = hour - 11
	}
	zone := "Etc/GMT"
	if offset > 0 {
		zone += "+" + strconv.Itoa(offset)
	} else if offset < 0 {
		zone += strconv.Itoa(offset)
	}
	c := a.clinic(t, testkit.ClinicOptions{Timezone: zone, Specialists: specialists, Types: types})
	for _, sp := range c.Specialists {
		a.openWeekends(t, c, sp.ID)
	}
	return c
}

// kioskTypes is n appointment types of durations from 15 minutes to an
// hour, one with a long name.
func kioskTypes(n int) []db.AppointmentTypeInsertParams {
	names := []string{"General consultation", "Vaccination", "Blood test", "Follow-up visit", "Check-up",
		"Physiotherapy assessment and treatment plan for back and neck pain", "Prescription renewal",
		"Travel medicine", "Allergy test", "ECG", "Wound care", "Ultrasound", "Nutrition advice", "Sick note"}
	mins := []int32{15, 20, 30, 45, 60}
	out := make([]db.AppointmentTypeInsertParams, n)
	for i := range out {
		out[i] = db.AppointmentTypeInsertParams{Name: names[i%len(names)], DurationMin: mins[i%len(mins)], MaxAdvanceDays: 60, MaxHoldsPerClient: 1}
	}
	return out
}

// kioskGeometry is what the fit check reads from the page.
type kioskGeometry struct {
	ScrollW, ScrollH, InnerW, InnerH int
	Blocks                           []struct {
		ID                         string
		ScrollH, ClientH, ScrollW  int
		ClientW, Times, TimesShown int
	}
	Cut        []string // elements whose content does not fit them
	QRTag      string
	QRAlt      string
	QRLoaded   bool
	QRSize     int
	PanelFits  bool
	BlockCount int
}

const kioskGeometryJS = `JSON.stringify((() => {
	const de = document.documentElement;
	const g = {ScrollW: de.scrollWidth, ScrollH: de.scrollHeight, InnerW: window.innerWidth, InnerH: window.innerHeight, Blocks: [], Cut: []};
	const cut = (el, what) => { if (el.scrollHeight > el.clientHeight || el.scrollWidth > el.clientWidth) g.Cut.push(what + " " + el.scrollWidth + "x" + el.scrollHeight + " in " + el.clientWidth + "x" + el.clientHeight); };
	document.querySelectorAll('[data-testid="kiosk-block"]').forEach(b => {
		const r = b.getBoundingClientRect();
		let shown = 0;
		b.querySelectorAll(".kiosk-time").forEach(t => {
			const tr = t.getBoundingClientRect();
			if (tr.top >= r.top && tr.bottom <= r.bottom && tr.left >= r.left && tr.right <= r.right && tr.bottom <= window.innerHeight) shown++;
			cut(t, "time " + t.textContent + " of " + b.id);
		});
		b.querySelectorAll("h3").forEach(h => cut(h, "day heading of " + b.id));
		g.Blocks.push({ID: b.id, ScrollH: b.scrollHeight, ClientH: b.clientHeight, ScrollW: b.scrollWidth, ClientW: b.clientWidth,
			Times: b.querySelectorAll(".kiosk-time").length, TimesShown: shown});
	});
	g.BlockCount = g.Blocks.length;
	const head = document.querySelector(".kiosk-head");
	if (head) cut(head, "header");
	const panel = document.querySelector('[data-testid="kiosk-book"]');
	g.PanelFits = !!panel && panel.scrollHeight <= panel.clientHeight && panel.getBoundingClientRect().bottom <= window.innerHeight;
	const qr = panel && panel.querySelector(".kiosk-qr");
	if (qr) {
		g.QRTag = qr.tagName.toLowerCase();
		g.QRAlt = qr.getAttribute("alt") || "";
		g.QRLoaded = qr.complete && qr.naturalWidth > 0;
		g.QRSize = Math.round(Math.min(qr.getBoundingClientRect().width, qr.getBoundingClientRect().height));
	}
	return g;
})())`

// The board fits one screen, at two sizes, for a small and a large clinic.
func TestKioskBoardFitsTheScreenInABrowser(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	boards := []struct {
		name string
		c    clinic
	}{
		{"demo-like", a.kioskFitClinic(t, 3, kioskTypes(3))},
		{"20-specialists-9-types", a.kioskFitClinic(t, 20, kioskTypes(9))},
		{"20-specialists-12-types", a.kioskFitClinic(t, 20, kioskTypes(12))},
	}
	for _, size := range []struct{ w, h int }{{1920, 1080}, {1280, 720}} {
		p := startBrowser(t, fmt.Sprintf("kiosk %dx%d", size.w, size.h), size.w, size.h)
		p.Do(10*time.Second, "set the screen size", chromedp.EmulateViewport(int64(size.w), int64(size.h)))
		for _, b := range boards {
			name := fmt.Sprintf("%s at %dx%d", b.name, size.w, size.h)
			p.Do(10*time.Second, "open "+name,
				chromedp.Navigate(a.URL+"/kiosk/"+b.c.Slug),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="kiosk-block"]`)),
			)
			// The QR code is an image whose data has to decode.
			p.Until(5*time.Second, `document.querySelector(".kiosk-qr").complete`)
			var g kioskGeometry
			if err := json.Unmarshal([]byte(evalJS[string](p, kioskGeometryJS)), &g); err != nil {
				t.Fatal(err)
			}
			wantKioskFits(t, name, g, len(b.c.Types), a.URL+"/c/"+b.c.Slug)
			p.Shot(fmt.Sprintf("kiosk-%dx%d-%s", size.w, size.h, b.name))
		}
		p.Report()
	}
}

func wantKioskFits(t *testing.T, name string, g kioskGeometry, types int, bookURL string) {
	t.Helper()
	if g.ScrollH > g.InnerH || g.ScrollW > g.InnerW {
		t.Errorf("%s: the page is %dx%d px in a %dx%d window: it scrolls", name, g.ScrollW, g.ScrollH, g.InnerW, g.InnerH)
	}
	if g.BlockCount != types {
		t.Errorf("%s: %d blocks, want one per type (%d)", name, g.BlockCount, types)
	}
	for _, b := range g.Blocks {
		if b.ScrollH > b.ClientH || b.ScrollW > b.ClientW {
			t.Errorf("%s: block %s's content is %dx%d px in a %dx%d block: it is cut", name, b.ID, b.ScrollW, b.ScrollH, b.ClientW, b.ClientH)
		}
		if b.Times < 2 || b.TimesShown != b.Times {
			t.Errorf("%s: block %s shows %d of its %d times (want all of them, and some on each day)", name, b.ID, b.TimesShown, b.Times)
		}
	}
	for _, c := range g.Cut {
		t.Errorf("%s: cut: %s", name, c)
	}
	if g.QRTag != "img" || !strings.Contains(g.QRAlt, bookURL) || !g.QRLoaded {
		t.Errorf("%s: QR code %s alt %q loaded %v, want an image naming %s", name, g.QRTag, g.QRAlt, g.QRLoaded, bookURL)
	}
	if minQR := g.InnerH / 5; g.QRSize < minQR {
		t.Errorf("%s: the QR code is %d px, want at least %d to scan across a room", name, g.QRSize, minQR)
	}
	if !g.PanelFits {
		t.Errorf("%s: the booking panel does not fit the screen", name)
	}
}

// A hold changes the count of its type's block on the board's stream,
// and the block still has no patient data.
func TestKioskLiveCountFollowsAHold(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	blockID := kioskTypeBlockID(typ)
	stream := dialSSE(t, nil, a.URL+"/kiosk/"+c.Slug+"/live")
	first, _ := stream.until(10*time.Second, "the board's first state", func(e sseEvent) bool { return e.Name == blockID })
	before := kioskEventFree(t, first, blockID)
	if len(before) != 2 || before[1] != 2*16 {
		t.Fatalf("tomorrow's count before the hold: %v, want 32 (16 times of two specialists)", before)
	}
	held := time.Now()
	holdNoJS(t, a.newClient(t), c, typ, sp.ID, c.At(1, 10, 0)).Want(http.StatusOK)
	ev, _ := stream.until(10*time.Second, "the count to drop", func(e sseEvent) bool {
		return e.Name == blockID && slices.Equal(kioskEventFree(t, e, blockID), []int{before[0], before[1] - 1})
	})
	if d := time.Since(held); d > 3*time.Second {
		t.Errorf("the board's count changed %s after the hold: want a second or two", d)
	}
	// The other specialist is still free at 10:00: the time stays.
	d, _ := goquery.NewDocumentFromReader(strings.NewReader(ev.Data()))
	if days := kioskTimes(d.Find("#" + blockID)); len(days) != 2 || !slices.Contains(days[1], "10:00") {
		t.Errorf("tomorrow's times after the hold: %v, want 10:00 still (the other specialist)", days)
	}
}

func kioskEventFree(t *testing.T, e sseEvent, blockID string) []int {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(strings.NewReader(e.Data()))
	if err != nil {
		t.Fatal(err)
	}
	return kioskFree(t, d.Find("#"+blockID))
}
