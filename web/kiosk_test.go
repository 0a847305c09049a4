package web_test

// Tests of the kiosk, the waiting room's board: today's and tomorrow's
// free times and counts of each type, live, with no patient data, and a
// device token once staff have made one.

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
)

// kioskTomorrow is the times of the block id on its second day (tomorrow).
func kioskTomorrow(t *testing.T, doc *goquery.Document, id string) []string {
	t.Helper()
	days := kioskTimes(doc.Find("#" + id))
	if len(days) != 2 {
		t.Fatalf("block %s has %d days", id, len(days))
	}
	return days[1]
}

func TestKioskListsFreeTimesAndNoPatientData(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(1, 10, 0) // tomorrow: on the board
	stream := dialSSE(t, nil, a.URL+"/kiosk/"+c.Slug+"/live")
	kiosk := a.newClient(t)

	r := kiosk.Get("/kiosk/" + c.Slug).Want(http.StatusOK)
	wantKioskBoard(t, r, c, "")
	blockID := kioskTypeBlockID(typ)
	if ts, free := kioskTomorrow(t, r.Doc(), blockID), kioskFree(t, r.Doc().Find("#"+blockID)); !slices.Contains(ts, "10:00") || len(ts) != 16 || free[1] != 32 {
		t.Fatalf("tomorrow for %s: %v, %d free, want 16 times with 10:00, 32 free (two specialists)", typ.Name, ts, free[1])
	}
	first, seen := stream.until(10*time.Second, "the kiosk stream's first state", func(e sseEvent) bool { return e.Name == blockID })
	seen = append(seen, first)

	const name, email, phone = "Zelda Quuxington", "zelda.quux@example.org", "+49 30 9876543"
	patient := a.newClient(t)
	held := holdNoJS(t, patient, c, typ, sp.ID, start).Want(http.StatusOK)
	// Held: the time is not free any more with sp, on the page and on the
	// stream; the other specialist still is.
	if free := kioskFree(t, kiosk.Get("/kiosk/"+c.Slug).Want(http.StatusOK).Doc().Find("#"+blockID)); free[1] != 31 {
		t.Errorf("a held time is still counted on the board: %d free tomorrow, want 31", free[1])
	}
	f := detailsForm(t, held.Doc(), name, email, phone)
	patient.Post(f.Action, f.Values).Want(http.StatusSeeOther)

	after := kiosk.Get("/kiosk/" + c.Slug).Want(http.StatusOK)
	if free := kioskFree(t, after.Doc().Find("#"+blockID)); free[1] != 31 || !slices.Contains(kioskTomorrow(t, after.Doc(), blockID), "10:30") {
		t.Errorf("after the booking, tomorrow for %s: %d free, want 31, and 10:30", sp.Name, free[1])
	}
	if ts := kioskTomorrow(t, after.Doc(), blockID); !slices.Contains(ts, "10:00") {
		t.Errorf("the other specialist lost 10:00 too: %v", ts)
	}
	if free := kioskFree(t, after.Doc().Find("#"+kioskTypeBlockID(c.Types[1]))); free[1] != 15 {
		t.Errorf("the same specialist's one-hour check-up still offers 10:00: %d check-ups free tomorrow, want 15", free[1])
	}
	secrets := []string{name, "Zelda", "Quuxington", email, "zelda.quux", phone, "9876543"}
	for _, secret := range secrets {
		if strings.Contains(after.Body, secret) {
			t.Errorf("the kiosk page shows patient data %q", secret)
		}
	}
	dropped, between := stream.until(10*time.Second, "the kiosk stream to count 10:00 taken", func(e sseEvent) bool {
		if e.Name != blockID {
			return false
		}
		d, err := goquery.NewDocumentFromReader(strings.NewReader(e.Data()))
		if err != nil {
			return false
		}
		days, free := kioskTimes(d.Find("#"+blockID)), kioskFree(t, d.Find("#"+blockID))
		return len(days) == 2 && len(free) == 2 && free[1] == 31 && slices.Contains(days[1], "10:30")
	})
	for _, ev := range append(append(seen, between...), dropped) {
		for _, secret := range secrets {
			if strings.Contains(ev.Data(), secret) {
				t.Errorf("the kiosk stream carries patient data %q", secret)
			}
		}
	}
}

// wantKioskBoard checks a kiosk page opened with device ("" for none): a
// whole page without cookies or controls, its stream (carrying the device
// token), its clock, a block of today and tomorrow per type, and the QR
// code of the clinic's booking page.
func wantKioskBoard(t *testing.T, r *response, c clinic, device string) {
	t.Helper()
	wantFullPage(t, r)
	if sc := r.Header.Values("Set-Cookie"); len(sc) != 0 {
		t.Errorf("the kiosk sets cookies: %v", sc)
	}
	k := r.Doc().Find(`[data-testid="kiosk"]`)
	if sc, _ := k.Attr("sse-connect"); sc != "/kiosk/"+c.Slug+"/live"+kioskStreamQuery(device, "en") {
		t.Errorf("kiosk sse-connect %q", sc)
	}
	if k.Find("form, button, input").Length() != 0 {
		t.Error("the kiosk has controls: it must be read-only and unable to hold")
	}
	if clock := text(k.Find(".kiosk-clock")); !regexp.MustCompile(`^\d\d:\d\d$`).MatchString(clock) {
		t.Errorf("clock %q", clock)
	}
	blocks := k.Find(`[data-testid="kiosk-block"]`)
	if blocks.Length() != 2 {
		t.Fatalf("%d blocks, want one per type (2)", blocks.Length())
	}
	seen := map[string]bool{}
	blocks.Each(func(_ int, b *goquery.Selection) {
		seen[text(b.Find("h2"))] = true
		days := b.Find(".kiosk-day h3 span:first-child")
		if days.Length() != 2 || text(days.First()) != "Today" || text(days.Last()) != "Tomorrow" {
			t.Errorf("block %q days %q", text(b.Find("h2")), text(days))
		}
	})
	for _, ty := range c.Types {
		if !seen[ty.Name] {
			t.Errorf("no block for %s (have %v)", ty.Name, seen)
		}
	}
	if alt := k.Find(`[data-testid="kiosk-book"] img.kiosk-qr`).AttrOr("alt", ""); !strings.Contains(alt, "/c/"+c.Slug) {
		t.Errorf("QR code alt %q, want the booking page /c/%s", alt, c.Slug)
	}
}

// Once staff have given a screen a device token, the board opens only with
// it, and its live stream carries it too.
func TestKioskWithDeviceTokensNeedsOne(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	token := "k_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	if _, err := db.New(a.Pool).KioskTokenInsert(context.Background(), db.KioskTokenInsertParams{
		ClinicID: c.ID, Name: "Waiting room 1", TokenHash: booking.HashToken(token), Language: "en",
	}); err != nil {
		t.Fatal(err)
	}
	cl := a.newClient(t)
	wantErrorPage(t, cl.Get("/kiosk/"+c.Slug), http.StatusForbidden)
	wantErrorPage(t, cl.Get("/kiosk/"+c.Slug+"?device=k_wrong"), http.StatusForbidden)
	r := cl.Get("/kiosk/" + c.Slug + "?device=" + url.QueryEscape(token)).Want(http.StatusOK)
	if sc, _ := r.Doc().Find(`[data-testid="kiosk"]`).Attr("sse-connect"); sc != "/kiosk/"+c.Slug+"/live"+kioskStreamQuery(token, "en") {
		t.Errorf("sse-connect %q: the stream must carry the device token", sc)
	}
	if r.Doc().Find(`[data-testid="kiosk-block"]`).Length() != 2 {
		t.Errorf("%d blocks", r.Doc().Find(`[data-testid="kiosk-block"]`).Length())
	}
	// The stream refuses a board without the token.
	if r := a.do(t, "GET", "/kiosk/"+c.Slug+"/live", nil); r.Status != http.StatusForbidden {
		t.Errorf("stream without the token: %d, want 403", r.Status)
	}
	s := dialSSE(t, nil, a.URL+"/kiosk/"+c.Slug+"/live?device="+url.QueryEscape(token))
	blockID := kioskTypeBlockID(c.Type0())
	s.until(10*time.Second, "the board's first state on the stream", func(e sseEvent) bool { return e.Name == blockID })
}

// A device token opens the board of its own clinic only: another clinic's
// valid token is refused on the board and on its stream alike, and each
// clinic's board follows its own rule (public until it has a token, then
// only with one of its own).
//
// Guards the clinic in the token check: with queries/staff.sql's
// KioskTokenValid matching the token's hash in any clinic (its
// "clinic_id = @clinic_id" dropped), A's token opens B's board and B's
// stream, and the refusals below fail.
func TestKioskTokenOfAnotherClinicIsRefusedOnBoardAndStream(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	clinicA, clinicB := a.patientClinic(t), a.patientClinic(t)
	cl := a.newClient(t)

	// B makes a token: B's board now needs one, A's stays public.
	_, tokenB := createKioskToken(t, a.signIn(t, clinicB.Admin), "Waiting room B")
	wantKioskRefused(t, a, cl, clinicB, "")
	wantKioskBoard(t, cl.Get("/kiosk/"+clinicA.Slug).Want(http.StatusOK), clinicA, "")
	wantKioskLive(t, a, clinicA, "")

	_, tokenA := createKioskToken(t, a.signIn(t, clinicA.Admin), "Waiting room A")
	// A's valid token is no key to B's board or stream; B's own is.
	wantKioskRefused(t, a, cl, clinicB, tokenA)
	wantKioskBoard(t, cl.Get("/kiosk/"+clinicB.Slug+"?device="+url.QueryEscape(tokenB)).Want(http.StatusOK), clinicB, tokenB)
	wantKioskLive(t, a, clinicB, tokenB)
	// A has a token now: its board needs one of its own, B's will not do.
	wantKioskRefused(t, a, cl, clinicA, "")
	wantKioskRefused(t, a, cl, clinicA, tokenB)
	wantKioskBoard(t, cl.Get("/kiosk/"+clinicA.Slug+"?device="+url.QueryEscape(tokenA)).Want(http.StatusOK), clinicA, tokenA)
	wantKioskLive(t, a, clinicA, tokenA)
}

// wantKioskRefused checks that c's board with device ("" for none) is
// refused, 403 KIOSK_TOKEN: a browser gets the error page saying why, a
// script the JSON error, and the board's stream does not open.
func wantKioskRefused(t *testing.T, a *app, cl *client, c clinic, device string) {
	t.Helper()
	board := "/kiosk/" + c.Slug + deviceParam(device)
	page := cl.Get(board)
	wantErrorPage(t, page, http.StatusForbidden)
	if msg := page.Text(`[data-testid="error-page"] p`); !strings.Contains(msg, "device link") {
		t.Errorf("%s: the error page says %q, not that the screen needs its device link", board, msg)
	}
	wantError(t, a.do(t, "GET", board, nil, "Accept", "application/json"), http.StatusForbidden, "KIOSK_TOKEN", "")
	wantStreamRefused(t, a.URL+"/kiosk/"+c.Slug+"/live"+deviceParam(device), http.StatusForbidden, "KIOSK_TOKEN")
}

// wantKioskLive opens c's board stream with device and waits for its
// first block.
func wantKioskLive(t *testing.T, a *app, c clinic, device string) {
	t.Helper()
	s := dialSSE(t, nil, a.URL+"/kiosk/"+c.Slug+"/live"+deviceParam(device))
	blockID := kioskTypeBlockID(c.Type0())
	s.until(10*time.Second, "the board's first state on the stream", func(e sseEvent) bool { return e.Name == blockID })
}

// deviceParam is the board's query for device ("" for none).
// kioskStreamQuery is the query of a board's stream: its device token
// ("" for none) and the languages the board was drawn in ("en", "de-en").
func kioskStreamQuery(device, langs string) string {
	if device == "" {
		return "?lang=" + langs
	}
	return "?device=" + url.QueryEscape(device) + "&lang=" + langs
}

func deviceParam(device string) string {
	if device == "" {
		return ""
	}
	return "?device=" + url.QueryEscape(device)
}

// With PUBLIC_URL set, the board's QR code leads to the booking page at
// that address whatever Host the screen was opened with; without it, at the
// screen's own address. (Building the link from the request alone fails
// the first check; ignoring the request fails the second.)
func TestKioskQRCodeLeadsToThePublicAddress(t *testing.T) {
	t.Parallel()
	alt := func(a *app, c clinic) string {
		r := a.newClient(t).Get("/kiosk/" + c.Slug).Want(http.StatusOK)
		return r.Doc().Find(`[data-testid="kiosk-book"] img.kiosk-qr`).AttrOr("alt", "")
	}
	public := newApp(t, withOptions(program.Options{PublicURL: "https://booking.example.org"}))
	pc := public.patientClinic(t)
	if got := alt(public, pc); !strings.Contains(got, "https://booking.example.org/c/"+pc.Slug) {
		t.Errorf("with PUBLIC_URL the QR code says %q", got)
	}
	plain := newApp(t)
	c := plain.patientClinic(t)
	if got := alt(plain, c); !strings.Contains(got, plain.URL+"/c/"+c.Slug) {
		t.Errorf("without PUBLIC_URL the QR code says %q, want %s/c/%s", got, plain.URL, c.Slug)
	}
}

// A made-up Host too long for a QR code (no PUBLIC_URL) still gets the
// board, with the address as text and no image, not a 500.
func TestKioskWithAHostTooLongForAQRCode(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	req, err := http.NewRequest(http.MethodGet, a.URL+"/kiosk/"+c.Slug, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = strings.Repeat("a", 3000) + ".example"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a long Host: %d, want the board (200)", res.StatusCode)
	}
	if strings.Contains(string(body), `class="kiosk-qr"`) {
		t.Error("a QR code was drawn for an address too long for one")
	}
}
