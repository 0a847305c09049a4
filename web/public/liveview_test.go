package public

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/liveview"
)

// An answer is sent with its length, not chunked, whatever its size; 304
// when the client has it.
func TestWriteAnswerSendsItsLength(t *testing.T) {
	body := []byte(strings.Repeat(`{"start":"2026-11-30T07:00:00Z"},`, 1000)) // 33 kB, past every buffer
	a := liveview.Answer{Body: body, ETag: liveview.ETag(body)}
	e := echo.New()
	e.GET("/", func(c echo.Context) error { return WriteAnswer(c, echo.MIMEApplicationJSON, a) })
	ts := httptest.NewServer(e)
	defer ts.Close()

	res, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(body) {
		t.Fatalf("body of %d bytes, want the answer's %d", len(got), len(body))
	}
	if res.ContentLength != int64(len(body)) || len(res.TransferEncoding) != 0 {
		t.Fatalf("Content-Length %d, Transfer-Encoding %q: want %d, not chunked", res.ContentLength, res.TransferEncoding, len(body))
	}
	if res.Header.Get("ETag") != a.ETag {
		t.Fatalf("ETag %q, want %q", res.Header.Get("ETag"), a.ETag)
	}

	req, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
	req.Header.Set("If-None-Match", a.ETag)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotModified || res.Header.Get("Content-Length") != "" {
		t.Fatalf("with its ETag: %d, Content-Length %q; want 304 without a length", res.StatusCode, res.Header.Get("Content-Length"))
	}
}
