package web_test

import (
	"bytes"
	"strings"
	"testing"

	sse "github.com/clinic/booking/web/stream"
)

// parseEvents is what a browser makes of an encoded stream.
func parseEvents(b []byte) []sseEvent {
	var out []sseEvent
	readSSE(bytes.NewReader(b), func(ev sseEvent) { out = append(out, ev) })
	return out
}

// asDataArrives is s as EventSource hands it over: every line break a "\n",
// none at the end.
func asDataArrives(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.TrimRight(s, "\n")
}

// Text in a payload is data and nothing else, however its lines end: a
// browser ends a line at "\r", "\n" or "\r\n", so a payload split only at
// "\n" could set the reconnect delay, rename the event or end it early.
func TestSSEPayloadCannotLeaveItsData(t *testing.T) {
	t.Parallel()
	payloads := map[string]string{
		"InjectedByCR":     "<li>Eve\rretry: 86400000\revent: nowhere\rdata: x</li>",
		"InjectedByCRLF":   "<li>Eve\r\nretry: 86400000\r\nid: 7\r\nevent: nowhere</li>",
		"BlankLineByCR":    "<li>Eve\r\rretry: 1\r\revent: nowhere\r\rdata: after</li>",
		"BlankLineByLF":    "<li>Eve\n\nretry: 1\n\nevent: nowhere</li>",
		"MixedAndLeading":  "\r\nfirst\rsecond\nthird\r\n\r\nfifth",
		"TrailingBreaks":   "<div>\n  <p>cell</p>\n</div>\r\n\r",
		"CommentAndColons": ": not a comment\r:still data\rretry:5\r",
		"OneLine":          `{"type":"ping"}`,
		"Empty":            "",
	}
	for name, payload := range payloads {
		t.Run(name, func(t *testing.T) {
			encoders := map[string]func([]byte) []byte{
				"Named":   func(p []byte) []byte { return sse.EncodeEvent("cal-2026-03-16", p) },
				"Unnamed": sse.EncodeData,
			}
			for enc, encode := range encoders {
				evs := parseEvents(encode([]byte(payload)))
				if len(evs) != 1 {
					t.Fatalf("%s: %d events, want 1: %s", enc, len(evs), describeEvents(evs))
				}
				ev := evs[0]
				wantName := ""
				if enc == "Named" {
					wantName = "cal-2026-03-16"
				}
				if ev.Name != wantName || ev.Retry != "" || ev.ID != "" {
					t.Errorf("%s: event %q, retry %q, id %q; want event %q and no retry or id", enc, ev.Name, ev.Retry, ev.ID, wantName)
				}
				if got, want := ev.Data(), asDataArrives(payload); got != want {
					t.Errorf("%s: data %q, want the text intact, %q", enc, got, want)
				}
			}
		})
	}
}

// A stream of events stays a stream of events: a hostile payload in the
// first does not swallow or rename the next.
func TestSSENextEventSurvivesAHostilePayload(t *testing.T) {
	t.Parallel()
	var stream []byte
	stream = append(stream, "retry: 2000\n\n"...)
	stream = append(stream, sse.EncodeEvent("cal-a", []byte("Eve\r\rretry: 86400000\revent: nowhere\r\r"))...)
	stream = append(stream, sse.EncodeEvent("cal-b", []byte("Later Patient"))...)
	evs := parseEvents(stream)
	if len(evs) != 3 {
		t.Fatalf("%d events, want the retry and two: %s", len(evs), describeEvents(evs))
	}
	if evs[0].Retry != "2000" || evs[1].Name != "cal-a" || evs[2].Name != "cal-b" || evs[2].Data() != "Later Patient" {
		t.Errorf("events: %s", describeEvents(evs))
	}
	for _, ev := range evs[1:] {
		if ev.Retry != "" {
			t.Errorf("event %q sets retry %q", ev.Name, ev.Retry)
		}
	}
}

// An event is one allocation, whatever its line breaks: the encoder runs
// for every changed fragment of every live view.
func TestSSEEncodingAllocatesOnce(t *testing.T) {
	payload := []byte(strings.Repeat("<td class=\"slot\">\n  10:00\r\n</td>\r", 40))
	if n := testing.AllocsPerRun(100, func() { _ = sse.EncodeEvent("cal-2026-03-16", payload) }); n != 1 {
		t.Errorf("EncodeEvent: %.0f allocations, want 1", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = sse.EncodeData(payload) }); n != 1 {
		t.Errorf("EncodeData: %.0f allocations, want 1", n)
	}
}

func BenchmarkSSEEncodeEvent(b *testing.B) {
	payload := []byte(strings.Repeat("<td class=\"slot\" id=\"c-1\">10:00</td>\n", 60))
	b.ReportAllocs()
	for b.Loop() {
		_ = sse.EncodeEvent("cal-2026-03-16", payload)
	}
}
