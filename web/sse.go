package web

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
	bufs := make(net.Buffers, 0, len(bs)+2)
	if h.chunked {
		bufs = append(bufs, []byte(strconv.FormatInt(int64(n), 16)+"\r\n"))
	}
	bufs = append(bufs, bs...)
	if h.chunked {
		bufs = append(bufs, crlf)
	}
	_ = h.conn.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	_, err := bufs.WriteTo(h.conn)
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

// data sends one unnamed event whose data is a single line (JSON).
func (s *sseWriter) data(line []byte) error {
	var b bytes.Buffer
	b.Grow(len(line) + 8)
	b.WriteString("data: ")
	b.Write(line)
	b.WriteString("\n\n")
	return s.write(b.Bytes())
}

// encodeNamed renders a named event whose data may span lines: each line
// of the payload becomes its own "data:" line, as the format requires.
func encodeNamed(name string, payload []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(payload) + len(name) + 32)
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteByte('\n')
	for _, line := range bytes.Split(bytes.TrimRight(payload, "\n"), []byte("\n")) {
		b.WriteString("data: ")
		b.Write(bytes.TrimRight(line, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// waitForEvents holds a new stream until the process's Redis subscription
// is up (just after start), so no change between its snapshot and the
// subscription is lost. With Redis down it gives up after a few seconds:
// the stream then starts, and resyncs when the subscription comes.
func (s *Server) waitForEvents(ctx context.Context) {
	select {
	case <-s.deps.Hub.Ready():
	case <-ctx.Done():
	case <-time.After(3 * time.Second):
	}
}
