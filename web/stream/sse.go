package stream

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
)

// sseWriter writes Server-Sent Events. The server's WriteTimeout would cut
// a stream after 30 s, so each write sets its own deadline instead: a client
// that stops reading is detected within sseWriteTimeout.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

const sseWriteTimeout = 10 * time.Second

func startSSE(c echo.Context) *sseWriter {
	h := c.Response().Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	c.Response().WriteHeader(http.StatusOK)
	s := &sseWriter{w: c.Response(), rc: http.NewResponseController(c.Response())}
	_ = s.rc.SetWriteDeadline(time.Time{})
	return s
}

func (s *sseWriter) write(b []byte) error {
	if err := s.writeBuffered(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// writeBuffered writes without flushing, for a batch that ends in flush.
func (s *sseWriter) writeBuffered(b []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	_, err := s.w.Write(b)
	return err
}

func (s *sseWriter) flush() error { return s.rc.Flush() }

// writeBatch writes events and flushes once.
func (s *sseWriter) writeBatch(bs [][]byte) error {
	for _, b := range bs {
		if err := s.writeBuffered(b); err != nil {
			return err
		}
	}
	return s.flush()
}

// writeFirst starts an HTML stream: the reconnection delay and the first
// events, flushed at once.
func (s *sseWriter) writeFirst(first [][]byte) error {
	return s.writeBatch(append([][]byte{[]byte("retry: 2000\n\n")}, first...))
}

// hijackedSSE writes a stream's events on a connection taken over from
// net/http after its response header went out. For HTTP/1.1 that header
// said "Transfer-Encoding: chunked", so every write is a chunk and the
// stream ends with the last chunk; for HTTP/1.0 the body simply runs to
// the close. A goroutine waits on the connection's read side and closes
// gone when the client leaves (its close, or any byte: a client has
// nothing to say on an event stream).
type hijackedSSE struct {
	conn    net.Conn
	chunked bool
	gone    chan struct{}
	// bufs, out and head are kept between writes (one goroutine writes):
	// a change reaching thousands of streams costs no allocation per
	// stream. out is what WriteTo consumes; bufs keeps its array.
	bufs, out net.Buffers
	head      []byte
}

func newHijackedSSE(conn net.Conn, chunked bool) *hijackedSSE {
	h := &hijackedSSE{conn: conn, chunked: chunked, gone: make(chan struct{})}
	go func() {
		var b [1]byte
		_, _ = conn.Read(b[:])
		close(h.gone)
	}()
	return h
}

var crlf = []byte("\r\n")

// writeBatch sends the events as one chunk, in one system call.
func (h *hijackedSSE) writeBatch(bs [][]byte) error {
	n := 0
	for _, b := range bs {
		n += len(b)
	}
	if n == 0 {
		return nil
	}
	bufs := h.bufs[:0]
	if h.chunked {
		h.head = append(strconv.AppendInt(h.head[:0], int64(n), 16), crlf...)
		bufs = append(bufs, h.head)
	}
	bufs = append(bufs, bs...)
	if h.chunked {
		bufs = append(bufs, crlf)
	}
	h.bufs, h.out = bufs, bufs
	_ = h.conn.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	_, err := h.out.WriteTo(h.conn)
	clear(bufs) // the events are not kept past their write
	return err
}

// close ends the body (with the last chunk) and closes the connection.
func (h *hijackedSSE) close() {
	if h.chunked {
		_ = h.conn.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = h.conn.Write([]byte("0\r\n\r\n"))
	}
	_ = h.conn.Close()
}

// retry sends the reconnection delay hint.
func (s *sseWriter) retry(ms int) error {
	return s.write([]byte("retry: " + strconv.Itoa(ms) + "\n\n"))
}

// data sends one unnamed event.
func (s *sseWriter) data(payload []byte) error {
	return s.write(EncodeData(payload))
}

// EncodeData renders an unnamed event.
func EncodeData(payload []byte) []byte {
	b := make([]byte, 0, dataSize(payload)+1)
	return append(appendData(b, payload), '\n')
}

// encodeNamed renders a named event. name is ours (a DOM id, "end"), never
// input, and holds no line break.
func EncodeEvent(name string, payload []byte) []byte {
	b := make([]byte, 0, len("event: \n")+len(name)+dataSize(payload)+1)
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, '\n')
	return append(appendData(b, payload), '\n')
}

// appendData appends payload as "data:" lines. A browser ends a line at
// "\r\n", "\r" or "\n" alike, so each of them starts a new "data:" line
// here: text in a payload (a patient's name in a calendar) can never
// become a field of its own ("retry:", "event:", "id:") or the blank line
// that ends the event. EventSource joins the lines with "\n", so the text
// arrives whole; line breaks at the end are dropped.
func appendData(b, payload []byte) []byte {
	payload = bytes.TrimRight(payload, "\r\n")
	for {
		b = append(b, "data: "...)
		i := lineEnd(payload)
		if i < 0 {
			b = append(b, payload...)
			return append(b, '\n')
		}
		b = append(b, payload[:i]...)
		b = append(b, '\n')
		if payload[i] == '\r' && i+1 < len(payload) && payload[i+1] == '\n' {
			i++
		}
		payload = payload[i+1:]
	}
}

// lineEnd is the index of the first "\r" or "\n" in p, or -1. Two
// IndexByte scans beat one IndexAny several times over on long lines.
func lineEnd(p []byte) int {
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		i = len(p)
	}
	if j := bytes.IndexByte(p[:i], '\r'); j >= 0 {
		return j
	}
	if i == len(p) {
		return -1
	}
	return i
}

// dataSize is room enough for payload's "data:" lines: one allocation
// per event.
func dataSize(payload []byte) int {
	lines := 1 + bytes.Count(payload, []byte{'\n'}) + bytes.Count(payload, []byte{'\r'})
	return len(payload) + lines*len("data: \n")
}

// waitForEvents holds a new stream until the process's Redis subscription
// is up (just after start), so no change between its snapshot and the
// subscription is lost. With Redis down it gives up after a few seconds:
// the stream then starts, and resyncs when the subscription comes.
func (s *Live) waitForEvents(ctx context.Context) {
	select {
	case <-s.deps.Hub.Ready():
	case <-ctx.Done():
	case <-time.After(3 * time.Second):
	}
}
