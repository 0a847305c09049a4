package main

import (
	"encoding/json"
	"slices"
	"testing"
)

// The scan finds exactly the starts encoding/json would, in order, in an
// answer shaped like the server's (specialist ids, an "end" beside each
// start, the zone first).
func TestSlotStartsScanAgreesWithEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`{"timezone":"Europe/Berlin","timeslots":[]}`,
		`{"timezone":"Europe/Berlin","timeslots":[` +
			`{"start":"2026-11-23T23:00:00Z","end":"2026-11-23T23:30:00Z","specialistIds":["ac6c9766-4327-4089-b708-e30479d8b2f7"]},` +
			`{"start":"2026-11-23T23:30:00Z","end":"2026-11-24T00:00:00Z","specialistIds":["ac6c9766-4327-4089-b708-e30479d8b2f7","f9978d47-eb87-47ba-aeaf-f3fd660b4f4b"]}]}`,
	} {
		var want struct {
			Timeslots []struct {
				Start string `json:"start"`
			} `json:"timeslots"`
		}
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatal(err)
		}
		var got slotStarts
		if err := got.scan([]byte(body)); err != nil {
			t.Fatal(err)
		}
		var starts []string
		for _, s := range want.Timeslots {
			starts = append(starts, s.Start)
		}
		if !slices.Equal(got, starts) {
			t.Fatalf("scan found %q, encoding/json %q", got, starts)
		}
	}
	var s slotStarts
	if err := s.scan([]byte(`{"timeslots":[{"start":"2026-11-23T23:00`)); err == nil {
		t.Fatal("a cut-off answer scanned without an error")
	}
}
