package letters_test

import (
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/letters"
)

// The reason staff gave is in a change or cancellation letter, labelled;
// without one there is no reason row at all.
func TestReasonOnlyWhenGiven(t *testing.T) {
	t.Parallel()
	const reason = "Dr. Müller is ill & cannot come"
	for _, kind := range []letters.Kind{letters.Change, letters.Cancellation} {
		for lang, label := range map[string]string{"en": "Reason", "de": "Grund"} {
			in := input(kind, lang, december)
			in.Reason = reason
			l := compose(t, in)
			if !strings.Contains(l.Text, label+":") || !strings.Contains(l.Text, reason) {
				t.Errorf("%s in %s: the text part does not give the reason:\n%s", kind, lang, l.Text)
			}
			if th := doc(t, l).Find("th:contains('" + label + "')"); th.Length() != 1 || th.Next().Text() != reason {
				t.Errorf("%s in %s: the HTML part's reason row is %q", kind, lang, th.Next().Text())
			}
			for _, empty := range []string{"", "  "} {
				in.Reason = empty
				l = compose(t, in)
				if strings.Contains(l.Text, label+":") || doc(t, l).Find("th:contains('"+label+"')").Length() != 0 {
					t.Errorf("%s in %s with reason %q: a reason row anyway", kind, lang, empty)
				}
			}
		}
	}
}

// A change shows the old time and the new one, and the old specialist
// only when the appointment moved to another.
func TestChangeShowsBeforeAndAfter(t *testing.T) {
	t.Parallel()
	in := input(letters.Change, "de", spring)
	prev := appointment(december, nasty)
	prev.Specialist = "Dr. Schmidt"
	in.Previous = &prev
	l := compose(t, in)
	for _, want := range []string{
		"Neue Zeit:", "Montag, 29. März 2027, 09:00 (Berliner Zeit)",
		"Bisherige Zeit:", "Dienstag, 1. Dezember 2026, 09:30 (Berliner Zeit)",
		"Bisher bei:", "Dr. Schmidt", "Dr. Müller",
	} {
		if !strings.Contains(l.Text, want) {
			t.Errorf("the change letter does not say %q:\n%s", want, l.Text)
		}
	}
	if row := doc(t, l).Find("th:contains('Bisherige Zeit')").Next().Text(); row != "Dienstag, 1. Dezember 2026, 09:30 (Berliner Zeit)" {
		t.Errorf("the HTML part's old time is %q", row)
	}
	prev.Specialist = in.Appointment.Specialist
	if l := compose(t, in); strings.Contains(l.Text, "Bisher bei") {
		t.Error("the same specialist is named as the previous one")
	}
}

// A reminder says "today" or "tomorrow" by the clinic's calendar, not by
// UTC's, and "coming up" further ahead.
func TestReminderSaysWhichDay(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		now  time.Time
		want string
	}{
		{time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), "Your appointment is tomorrow"},
		// 00:30 on 1 December in Berlin, still 30 November in UTC.
		{time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC), "Your appointment is today"},
		// 23:30 on 30 November in Berlin.
		{time.Date(2026, 11, 30, 22, 30, 0, 0, time.UTC), "Your appointment is tomorrow"},
		// 00:30 on 30 November in Berlin, still 29 November in UTC.
		{time.Date(2026, 11, 29, 23, 30, 0, 0, time.UTC), "Your appointment is tomorrow"},
		// 23:30 on 29 November in Berlin.
		{time.Date(2026, 11, 29, 22, 30, 0, 0, time.UTC), "Your appointment is coming up"},
		{time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), "Your appointment is coming up"},
	} {
		in := input(letters.Reminder, "en", december)
		in.Now = c.now
		l := compose(t, in)
		if h := doc(t, l).Find("h1").Text(); h != c.want {
			t.Errorf("written at %s: heading %q, want %q", c.now, h, c.want)
		}
		if !strings.HasPrefix(l.Text, c.want+"\n") {
			t.Errorf("written at %s: the text part starts %q", c.now, strings.SplitN(l.Text, "\n", 2)[0])
		}
	}
	in := input(letters.Reminder, "de", december)
	in.Now = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	if h := doc(t, compose(t, in)).Find("h1").Text(); h != "Ihr Termin ist morgen" {
		t.Errorf("German heading %q", h)
	}
}

// The list names each appointment with its own link, in order.
func TestLookupListsEachWithItsLink(t *testing.T) {
	t.Parallel()
	in := input(letters.Lookup, "de", december)
	second := appointment(spring, "Tom")
	second.TypeName, second.Specialist = "Check-up", "Dr. Schmidt"
	in.List = append(in.List, letters.Listed{Appointment: second, ManageURL: "https://clinic.example/manage/tok-456"})
	l := compose(t, in)
	first := strings.Index(l.Text, "Dienstag, 1. Dezember 2026, 09:30 (Berliner Zeit)")
	link1 := strings.Index(l.Text, manageURL)
	then := strings.Index(l.Text, "Montag, 29. März 2027, 09:00 (Berliner Zeit)")
	link2 := strings.Index(l.Text, "https://clinic.example/manage/tok-456")
	if first < 0 || !(first < link1 && link1 < then && then < link2) {
		t.Errorf("the list is not each time followed by its link:\n%s", l.Text)
	}
	if !strings.Contains(l.Text, "Check-up bei Dr. Schmidt") {
		t.Errorf("the list does not say what and with whom:\n%s", l.Text)
	}
	if got := hrefs(doc(t, l)); len(got) != 2 || got[0] != manageURL || got[1] != "https://clinic.example/manage/tok-456" {
		t.Errorf("the HTML part links %q", got)
	}
	if strings.Contains(l.Text, nasty) {
		t.Error("the list greets by the name of one of its bookings")
	}
}

// Any language but German gets English.
func TestUnknownLanguageIsEnglish(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"fr", "", "DE", "de-AT"} {
		l := compose(t, input(letters.Confirmation, lang, december))
		if l.Subject != "Your appointment on Tue 1 Dec at 09:30 is booked" {
			t.Errorf("language %q: subject %q", lang, l.Subject)
		}
		if got, _ := doc(t, l).Find("html").Attr("lang"); got != "en" {
			t.Errorf("language %q: <html lang=%q>", lang, got)
		}
	}
}

func TestComposeRefuses(t *testing.T) {
	t.Parallel()
	cases := map[string]func(*letters.Input){
		"unknown zone":        func(in *letters.Input) { in.Clinic.Timezone = "Europe/Atlantis" },
		"no zone":             func(in *letters.Input) { in.Clinic.Timezone = "" },
		"the machine's zone":  func(in *letters.Input) { in.Clinic.Timezone = "Local" },
		"unknown kind":        func(in *letters.Input) { in.Kind = "invoice" },
		"change without prev": func(in *letters.Input) { in.Kind, in.Previous = letters.Change, nil },
		"empty list":          func(in *letters.Input) { in.Kind, in.List = letters.Lookup, nil },
		"list without link":   func(in *letters.Input) { in.Kind, in.List[0].ManageURL = letters.Lookup, "" },
		"no manage link":      func(in *letters.Input) { in.ManageURL = "" },
		"waitlist, no link":   func(in *letters.Input) { in.Kind, in.Waitlist.URL = letters.WaitlistJoined, "" },
		"offer, no link":      func(in *letters.Input) { in.Kind, in.Waitlist.URL = letters.WaitlistOffer, "" },
		"offer, no time":      func(in *letters.Input) { in.Kind, in.Offer = letters.WaitlistOffer, nil },
		"offer, no end of it": func(in *letters.Input) { in.Kind, in.Offer.Until = letters.WaitlistOffer, time.Time{} },
	}
	for name, spoil := range cases {
		in := input(letters.Confirmation, "en", december)
		spoil(&in)
		if l, err := letters.Compose(in); err == nil {
			t.Errorf("%s: composed %q", name, l.Subject)
		}
	}
	// A cancellation without a booking page has no button, and no error.
	in := input(letters.Cancellation, "en", december)
	in.BookURL = ""
	if l := compose(t, in); len(hrefs(doc(t, l))) != 0 || strings.Contains(l.Text, "://") {
		t.Errorf("a cancellation without BookURL links somewhere:\n%s", l.Text)
	}
}

// A letter carries the booking's patient's name and nothing else of theirs.
func TestNoOtherPatientDetails(t *testing.T) {
	t.Parallel()
	for _, kind := range everyKind {
		l := compose(t, input(kind, "en", december))
		for _, part := range []string{l.Subject, l.Text, l.HTML} {
			if strings.Contains(part, "tom@example.org") || strings.Contains(part, "5550101") {
				t.Errorf("%s: a part carries the patient's e-mail or phone", kind)
			}
		}
		for _, a := range l.Attachments {
			if strings.Contains(string(a.Data), "Tom") {
				t.Errorf("%s: the .ics carries the patient's name", kind)
			}
		}
	}
}
