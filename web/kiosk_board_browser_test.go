package web_test

// The kiosk board's words and room in headless Chromium, at 1920x1080 and
// 1280x720: long type names wrap and are never cut, the room below today
// and tomorrow holds the next days' first free times, a German board
// says no English, and a board of two languages takes turns.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/seed"
)

// kioskRoom is what the room check reads from a board: each type name's
// size against its box, and how far down each block its content reaches.
type kioskRoom struct {
	Names []struct {
		Text                         string
		ScrollW, ClientW, ScrollH, H int
	}
	Blocks []struct {
		ID      string
		Reach   float64 // the lowest visible content's bottom, as a share of the block's height
		Ahead   int     // next days shown
		HasRoom bool    // the block has its next days' list
	}
	Body string
}

const kioskRoomJS = `JSON.stringify((() => {
	const seen = el => el.getClientRects().length > 0;
	const g = {Names: [], Blocks: [], Body: document.body.innerText};
	document.querySelectorAll('[data-testid="kiosk-name"]').forEach(n => {
		if (seen(n)) g.Names.push({Text: n.textContent, ScrollW: n.scrollWidth, ClientW: n.clientWidth, ScrollH: n.scrollHeight, H: n.clientHeight});
	});
	document.querySelectorAll('[data-testid="kiosk-block"]').forEach(b => {
		const r = b.getBoundingClientRect();
		let low = r.top;
		b.querySelectorAll("h2, h3, .kiosk-time, li, p").forEach(e => { if (seen(e)) low = Math.max(low, e.getBoundingClientRect().bottom); });
		const ahead = Array.from(b.querySelectorAll('[data-testid="kiosk-ahead"]')).filter(seen);
		g.Blocks.push({ID: b.id, Reach: (low - r.top) / r.height, HasRoom: ahead.length > 0,
			Ahead: ahead.length ? ahead[0].querySelectorAll("li").length : 0});
	});
	return g;
})())`

// kioskLongTypes are types with long names in English and German, and one
// a day's worth of times only now and then (a whole-morning type), so its
// block has room below today and tomorrow.
func kioskLongTypes() ([]db.AppointmentTypeInsertParams, []string) {
	types := []db.AppointmentTypeInsertParams{
		{Name: "Physiotherapy assessment and treatment plan for back and neck pain", DurationMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
		{Name: "Occupational medicine examination", DurationMin: 240, SlotStepMin: 240, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
		{Name: "Vaccination", DurationMin: 15, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
	}
	german := []string{
		"Physiotherapeutische Befunderhebung und Behandlungsplan bei Rücken- und Nackenschmerzen",
		"Arbeitsmedizinische Vorsorgeuntersuchung",
		"Schutzimpfung",
	}
	return types, german
}

func TestKioskBoardWrapsNamesFillsItsRoomAndSpeaksGerman(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	types, german := kioskLongTypes()
	c := a.kioskFitClinic(t, 2, types)
	ctx := context.Background()
	if _, err := a.Pool.Exec(ctx, `UPDATE clinics SET language = 'de' WHERE id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
	english := englishOf(t, seed.Demo{})
	for i, ty := range c.Types {
		tr, _ := json.Marshal(map[string]map[string]string{"de": {"name": german[i]}})
		if _, err := a.Pool.Exec(ctx, `UPDATE appointment_types SET translations = $2 WHERE id = $1`, ty.ID, tr); err != nil {
			t.Fatal(err)
		}
		english = append(english, ty.Name)
	}
	for _, size := range []struct{ w, h int }{{1920, 1080}, {1280, 720}} {
		name := fmt.Sprintf("German board at %dx%d", size.w, size.h)
		p := startBrowser(t, name, size.w, size.h)
		p.Do(10*time.Second, "set the screen size", chromedp.EmulateViewport(int64(size.w), int64(size.h)))
		p.Do(10*time.Second, "open the board", chromedp.Navigate(a.URL+"/kiosk/"+c.Slug), chromedp.WaitVisible(chromedp.CSS(`[data-testid="kiosk-block"]`)))
		p.Until(5*time.Second, `document.querySelector(".kiosk-qr").complete`)
		var g kioskGeometry
		if err := json.Unmarshal([]byte(evalJS[string](p, kioskGeometryJS)), &g); err != nil {
			t.Fatal(err)
		}
		wantKioskFits(t, name, g, len(types), a.URL+"/c/"+c.Slug)
		room := readKioskRoom(t, p)
		wantKioskRoom(t, name, room, len(types))
		for _, want := range german {
			if !strings.Contains(strings.Join(strings.Fields(room.Body), " "), want) {
				t.Errorf("%s: the type %q is not on the board", name, want)
			}
		}
		noEnglish(t, name, room.Body, english)
		p.Shot(fmt.Sprintf("kiosk-de-%dx%d-long-names", size.w, size.h))
		p.Report()
	}
}

func readKioskRoom(t *testing.T, p *browserTab) kioskRoom {
	t.Helper()
	var room kioskRoom
	if err := json.Unmarshal([]byte(evalJS[string](p, kioskRoomJS)), &room); err != nil {
		t.Fatal(err)
	}
	return room
}

// wantKioskRoom checks every type's name is shown whole and every block's
// content reaches into its lower half, the next days filling the room
// where a day has few times.
func wantKioskRoom(t *testing.T, name string, room kioskRoom, types int) {
	t.Helper()
	if len(room.Names) != types {
		t.Errorf("%s: %d type names shown, want %d", name, len(room.Names), types)
	}
	for _, n := range room.Names {
		// A pixel of height is the rounding of a line's height, not a cut.
		if n.ScrollW > n.ClientW || n.ScrollH > n.H+1 {
			t.Errorf("%s: the name %q is %dx%d px in a %dx%d box: it is cut", name, n.Text, n.ScrollW, n.ScrollH, n.ClientW, n.H)
		}
	}
	most := 0
	for _, b := range room.Blocks {
		if b.Reach < 0.6 {
			t.Errorf("%s: block %s's content ends %.0f%% of the way down: its lower half is empty", name, b.ID, 100*b.Reach)
		}
		most = max(most, b.Ahead)
	}
	// The type with few times a day has the room below them for the
	// next days.
	if most < 3 {
		t.Errorf("%s: no block shows three or more next days: %+v", name, room.Blocks)
	}
}

// A screen of two languages shows one at a time and turns to the other.
func TestKioskBoardOfTwoLanguagesTakesTurns(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	types, german := kioskLongTypes()
	c := a.kioskFitClinic(t, 1, types[:1])
	if _, err := a.Pool.Exec(context.Background(), `UPDATE appointment_types SET translations = '{"de": {"name": "`+german[0]+`"}}' WHERE id = $1`, c.Types[0].ID); err != nil {
		t.Fatal(err)
	}
	admin := a.signIn(t, c.Admin)
	device := createKioskScreen(t, admin, "Lobby", "both")
	p := startBrowser(t, "two languages", 1280, 720)
	defer p.Report()
	p.Do(10*time.Second, "screen size", chromedp.EmulateViewport(1280, 720))
	p.Do(10*time.Second, "open the board", chromedp.Navigate(a.URL+"/kiosk/"+c.Slug+"?device="+url.QueryEscape(device)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="kiosk-block"]`)))
	body := readKioskRoom(t, p).Body
	if !strings.Contains(body, types[0].Name) || strings.Contains(body, german[0]) || !strings.Contains(body, "Book an appointment") || strings.Contains(body, "Termin buchen") {
		t.Errorf("the board of an English clinic does not start in English alone:\n%s", clip(body, 800))
	}
	// The turn comes each data-every seconds: one, for the test.
	evalJS[string](p, `document.querySelector(".kiosk").dataset.every = "1"`)
	if !p.Until(5*time.Second, `document.querySelector(".kiosk").dataset.lang === "de"`) {
		t.Fatal("the board never turned to German")
	}
	body = readKioskRoom(t, p).Body
	if !strings.Contains(body, german[0]) || strings.Contains(body, types[0].Name) || !strings.Contains(body, "Termin buchen") || strings.Contains(body, "Book an appointment") {
		t.Errorf("in German's turn the board says:\n%s", clip(body, 800))
	}
	if lang := evalJS[string](p, `document.documentElement.lang`); lang != "de" {
		t.Errorf("in German's turn the page's language is %q", lang)
	}
	if bad := axeSerious(t, p); len(bad) > 0 {
		t.Errorf("axe on the board of two languages: %v", bad)
	}
}
