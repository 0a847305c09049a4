package letters_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clinic/booking/internal/letters"
)

// factRow is the value of the HTML part's fact labelled label.
func factRow(t *testing.T, l letters.Letter, label string) string {
	t.Helper()
	th := doc(t, l).Find("th").FilterFunction(func(_ int, s *goquery.Selection) bool { return s.Text() == label })
	if th.Length() != 1 {
		t.Fatalf("the HTML part has %d rows labelled %q", th.Length(), label)
	}
	return th.Next().Text()
}

// flat is the text part with its lines joined, for sentences it wraps.
func flat(l letters.Letter) string { return strings.Join(strings.Fields(l.Text), " ") }

// The place taken: what, with whom, which days and parts of the day (in
// the clinic's zone, named), and the link to the place, in both parts
// and both languages.
func TestWaitlistJoinedSaysWhatAndWhen(t *testing.T) {
	t.Parallel()
	cases := []struct {
		lang, daysLabel, days, timesLabel, times, action string
	}{
		{"en", "Days", "Tuesday 1 December 2026 to Friday 11 December 2026",
			"Times of day", "mornings before 12:00, evenings from 17:00 (Berlin time)", "See or leave your place"},
		{"de", "Tage", "Dienstag, 1. Dezember 2026 bis Freitag, 11. Dezember 2026",
			"Tageszeiten", "vormittags vor 12:00, abends ab 17:00 (Berliner Zeit)", "Ihren Platz ansehen oder verlassen"},
	}
	for _, c := range cases {
		l := compose(t, input(letters.WaitlistJoined, c.lang, december))
		for _, want := range []string{c.days, c.times, "Dr. Müller", "Consultation", "Praxis Mitte", c.action + ":"} {
			if !strings.Contains(flat(l), want) {
				t.Errorf("%s: the text part does not say %q:\n%s", c.lang, want, l.Text)
			}
		}
		if got := factRow(t, l, c.daysLabel); got != c.days {
			t.Errorf("%s: the HTML part's days are %q", c.lang, got)
		}
		if got := factRow(t, l, c.timesLabel); got != c.times {
			t.Errorf("%s: the HTML part's times of day are %q", c.lang, got)
		}
		if !slices.Contains(trimmedLines(l.Text), manageURL) || !slices.Contains(hrefs(doc(t, l)), manageURL) {
			t.Errorf("%s: the place's link is not in both parts", c.lang)
		}
		if a := doc(t, l).Find("a:contains('" + c.action + "')"); a.Length() != 1 {
			t.Errorf("%s: no button %q", c.lang, c.action)
		}
	}
}

// Any specialist is said so; no parts of the day, no row for them; one
// day is named once.
func TestWaitlistJoinedAnySpecialistAnyTime(t *testing.T) {
	t.Parallel()
	for lang, want := range map[string][3]string{
		"en": {"Any specialist", "Times of day", "Tuesday 1 December 2026"},
		"de": {"Beliebig", "Tageszeiten", "Dienstag, 1. Dezember 2026"},
	} {
		in := input(letters.WaitlistJoined, lang, december)
		in.Waitlist.Specialist, in.Waitlist.Times, in.Waitlist.To = "", nil, in.Waitlist.From
		l := compose(t, in)
		if got := factRow(t, l, map[string]string{"en": "With", "de": "Bei"}[lang]); got != want[0] {
			t.Errorf("%s: with %q, want %q", lang, got, want[0])
		}
		if strings.Contains(l.Text, want[1]) || doc(t, l).Find("th:contains('"+want[1]+"')").Length() != 0 {
			t.Errorf("%s: a times-of-day row without any times:\n%s", lang, l.Text)
		}
		if got := factRow(t, l, map[string]string{"en": "Days", "de": "Tage"}[lang]); got != want[2] {
			t.Errorf("%s: one day reads %q", lang, got)
		}
	}
}

// The offer: the time in the clinic's zone, start to end, with the zone
// named; until when it stands and what happens then; its link.
func TestWaitlistOfferSaysTheTimeAndUntilWhen(t *testing.T) {
	t.Parallel()
	cases := []struct {
		lang  string
		start time.Time
		when  string
		until string
	}{
		{"en", december, "Tuesday 1 December 2026, 09:30–10:00 (Berlin time)",
			"This offer stands until 11:15 (Berlin time); after that it goes to the next person waiting and you leave the list."},
		{"de", december, "Dienstag, 1. Dezember 2026, 09:30–10:00 (Berliner Zeit)",
			"Dieses Angebot gilt bis 11:15 (Berliner Zeit); danach geht es an die nächste Person auf der Warteliste, und Sie verlassen die Liste."},
		{"en", spring, "Monday 29 March 2027, 09:00–09:30 (Berlin time)", "until 11:15 (Berlin time)"},
		{"de", spring, "Montag, 29. März 2027, 09:00–09:30 (Berliner Zeit)", "bis 11:15 (Berliner Zeit)"},
	}
	for _, c := range cases {
		l := compose(t, input(letters.WaitlistOffer, c.lang, c.start))
		name := c.lang + "/" + c.start.Format(time.DateOnly)
		d := doc(t, l)
		for _, want := range []string{c.when, c.until, "Dr. Müller", "Consultation"} {
			if !strings.Contains(flat(l), want) {
				t.Errorf("%s: the text part does not say %q:\n%s", name, want, l.Text)
			}
			if !strings.Contains(d.Text(), want) {
				t.Errorf("%s: the HTML part does not say %q", name, want)
			}
		}
		if got := factRow(t, l, map[string]string{"en": "When", "de": "Wann"}[c.lang]); got != c.when {
			t.Errorf("%s: the HTML part's time is %q", name, got)
		}
		if !slices.Contains(trimmedLines(l.Text), manageURL) || !slices.Contains(hrefs(d), manageURL) {
			t.Errorf("%s: the offer's link is not in both parts", name)
		}
	}
}

// An offer standing past the day the letter is written names the day it
// ends, in the clinic's calendar.
func TestWaitlistOfferUntilAnotherDay(t *testing.T) {
	t.Parallel()
	in := input(letters.WaitlistOffer, "de", december)
	in.Now = time.Date(2026, 11, 30, 22, 50, 0, 0, time.UTC) // 23:50 in Berlin
	in.Offer.Until = in.Now.Add(15 * time.Minute)            // 00:05 on 1 December
	if l := compose(t, in); !strings.Contains(flat(l), "bis Di., 1. Dez., 00:05 (Berliner Zeit)") {
		t.Errorf("the end of the offer on the next day:\n%s", l.Text)
	}
	in.Now = time.Date(2026, 11, 30, 22, 30, 0, 0, time.UTC) // 23:30 in Berlin
	in.Offer.Until = in.Now.Add(15 * time.Minute)            // 23:45, the same day
	if l := compose(t, in); !strings.Contains(flat(l), "bis 23:45 (Berliner Zeit);") {
		t.Errorf("the end of the offer on the same day:\n%s", l.Text)
	}
}

// The place taken, not confirmed yet: the letter asks to confirm it, with
// the button to its page, says that unconfirmed places end, and tells a
// stranger to the request to ignore it; in both languages.
func TestWaitlistJoinedAsksToConfirm(t *testing.T) {
	t.Parallel()
	for lang, want := range map[string][3]string{
		"en": {"Confirm your place", "24 hours", "ignore this e-mail"},
		"de": {"Ihren Platz bestätigen", "24 Stunden", "ignorieren"},
	} {
		in := input(letters.WaitlistJoined, lang, december)
		in.Waitlist.Unconfirmed = true
		l := compose(t, in)
		for _, w := range []string{want[0] + ":", want[1], want[2]} {
			if !strings.Contains(flat(l), w) {
				t.Errorf("%s: the text part does not say %q:\n%s", lang, w, l.Text)
			}
		}
		if a := doc(t, l).Find("a:contains('" + want[0] + "')"); a.Length() != 1 {
			t.Errorf("%s: no button %q", lang, want[0])
		}
		if !slices.Contains(hrefs(doc(t, l)), manageURL) {
			t.Errorf("%s: the place's link is not the button's", lang)
		}
	}
}

// An offered time withdrawn: the subject and the facts name the time in
// the clinic's zone, the text says the place is kept, the button leads to
// the place; in both languages.
func TestWaitlistWithdrawnSaysTheTimeAndThatThePlaceIsKept(t *testing.T) {
	t.Parallel()
	cases := []struct{ lang, subject, when, kept string }{
		{"en", "The time on Tue 1 Dec at 09:30 is no longer free", "Tuesday 1 December 2026, 09:30–10:00 (Berlin time)",
			"You keep your place on the waitlist"},
		{"de", "Der Termin am Di., 1. Dez. um 09:30 ist nicht mehr frei", "Dienstag, 1. Dezember 2026, 09:30–10:00 (Berliner Zeit)",
			"Ihr Platz auf der Warteliste bleibt bestehen"},
	}
	for _, c := range cases {
		l := compose(t, input(letters.WaitlistWithdrawn, c.lang, december))
		if l.Subject != c.subject {
			t.Errorf("%s: the subject is %q, want %q", c.lang, l.Subject, c.subject)
		}
		if got := factRow(t, l, map[string]string{"en": "When", "de": "Wann"}[c.lang]); got != c.when {
			t.Errorf("%s: the time is %q, want %q", c.lang, got, c.when)
		}
		if !strings.Contains(flat(l), c.kept) || !strings.Contains(doc(t, l).Text(), c.kept) {
			t.Errorf("%s: the letter does not say the place is kept:\n%s", c.lang, l.Text)
		}
		if !slices.Contains(hrefs(doc(t, l)), manageURL) {
			t.Errorf("%s: no button to the place", c.lang)
		}
	}
}
