package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/testkit"
)

// Two admins with one room's page open: the first to save its details or
// its hours wins; the second is answered 409 with the room's current
// values and a message in their language, and nothing of theirs is
// written.
func TestStaffRoomEditsCarryTheVersion(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	for _, lang := range []string{"en", "de"} {
		t.Run(lang, func(t *testing.T) {
			c := a.clinic(t, testkit.ClinicOptions{})
			u := c.Admin.User(c.ID)
			room, err := a.Deps.Practice.CreateRoom(t.Context(), u, practice.RoomInput{Name: "Sono 1", Kind: "ultrasound", AlwaysOpen: true, Active: true})
			if err != nil {
				t.Fatal(err)
			}
			page := "/staff/rooms/" + room.ID.String()
			first, second := a.signIn(t, c.Admin), a.signIn(t, c.Admin)
			switchTo(t, second, page, lang)
			seen := second.Get(page).Want(http.StatusOK)
			version, _ := seen.Doc().Find(`[data-testid="room-form"] input[name="version"]`).Attr("value")
			if hv, _ := seen.Doc().Find(`[data-testid="room-hours"] input[name="version"]`).Attr("value"); version != strconv.Itoa(int(room.Version)) || hv != version {
				t.Fatalf("the forms carry versions %q and %q, want %d", version, hv, room.Version)
			}
			first.Post(page, url.Values{"name": {"Sono A"}, "kind": {"ultrasound"}, "always": {"on"}, "active": {"on"}, "version": {version}}).Want(http.StatusSeeOther)

			want := "This was changed by someone else since you opened it"
			if lang == "de" {
				want = "Jemand anderes hat dies geändert"
			}
			r := second.Post(page, url.Values{"name": {"Sono B"}, "kind": {"ultrasound"}, "always": {"on"}, "active": {"on"}, "version": {version}})
			if r.Status != http.StatusConflict || !strings.Contains(r.Text(`[data-testid="room-stale"]`), want) {
				t.Errorf("the second save of the details: %d %q, want 409 saying %q", r.Status, r.Text(`[data-testid="room-stale"]`), want)
			}
			if v, _ := r.Doc().Find(`#name`).Attr("value"); v != "Sono A" {
				t.Errorf("the refused page shows the name %q, want the winner's Sono A", v)
			}
			r = second.Post(page+"/hours", url.Values{"hours.monday": {"08:00-12:00"}, "version": {version}})
			if r.Status != http.StatusConflict || !strings.Contains(r.Text(`[data-testid="room-stale"]`), want) {
				t.Errorf("a save of the hours from the old page: %d %q, want 409", r.Status, r.Text(`[data-testid="room-stale"]`))
			}
			got, err := a.Deps.Practice.Room(t.Context(), u, room.ID)
			if err != nil || got.Name != "Sono A" || got.Version != room.Version+1 {
				t.Errorf("the room after the refused saves: %+v %v, want Sono A at version %d", got, err, room.Version+1)
			}
			if hours, err := a.Deps.Practice.RoomHours(t.Context(), u, room.ID); err != nil || len(hours) != 0 {
				t.Errorf("the refused hours were written: %v %v", hours, err)
			}
			// With the current version the hours are saved, and the details
			// form now carries the version they left.
			cur := strconv.Itoa(int(got.Version))
			second.Post(page+"/hours", url.Values{"hours.monday": {"08:00-12:00"}, "version": {cur}}).Want(http.StatusSeeOther)
			second.Post(page, url.Values{"name": {"Sono B"}, "kind": {"ultrasound"}, "active": {"on"}, "version": {cur}}).Want(http.StatusConflict)
		})
	}
}
