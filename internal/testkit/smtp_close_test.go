package testkit

import (
	"testing"
	"time"
)

// A server closed at once, before its Serve goroutine has run, must still
// stop: the cleanup waits for Serve to return.
func TestSMTPServerClosedRightAfterStart(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 300 {
			t.Run("", func(t *testing.T) { SMTP(t) })
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("an SMTP server started and closed at once was still serving after 30 s")
	}
}
