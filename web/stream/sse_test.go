package stream

import (
	"bytes"
	"net"
	"strconv"
	"testing"
	"time"
)

// nullConn is a connection that takes every write.
type nullConn struct {
	net.Conn
	got bytes.Buffer
}

func (c *nullConn) Write(b []byte) (int, error)      { return c.got.Write(b) }
func (c *nullConn) SetWriteDeadline(time.Time) error { return nil }

// A hijacked stream writes each batch as one HTTP/1.1 chunk.
func TestHijackedSSEWritesABatchAsOneChunk(t *testing.T) {
	c := &nullConn{}
	h := &hijackedSSE{conn: c, chunked: true}
	ev := EncodeEvent("slot-1", []byte("<li>free</li>"))
	for range 2 {
		if err := h.writeBatch([][]byte{ev, ev}); err != nil {
			t.Fatal(err)
		}
	}
	chunk := strconv.FormatInt(int64(2*len(ev)), 16) + "\r\n" + string(ev) + string(ev) + "\r\n"
	if got, want := c.got.String(), chunk+chunk; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}

// BenchmarkHijackedSSEWrite is one stream's write of one change, the part
// of a fan-out paid once per stream: allocations per op are what a change
// reaching 10,000 streams leaves to the garbage collector, 10,000 times.
func BenchmarkHijackedSSEWrite(b *testing.B) {
	ev := EncodeEvent("slot-any-1764572400", bytes.Repeat([]byte("x"), 480))
	c := &nullConn{}
	h := &hijackedSSE{conn: c, chunked: true}
	batch := [][]byte{ev}
	b.ReportAllocs()
	for b.Loop() {
		c.got.Reset()
		if err := h.writeBatch(batch); err != nil {
			b.Fatal(err)
		}
	}
}
