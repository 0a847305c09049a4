package httpx

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
)

// A query is refused, naming its field, whether the bytes that are not
// text come raw or escaped, in a value or a name; a clean query, '+'
// included, passes without being parsed here.
func TestTextOnlyQuery(t *testing.T) {
	e := echo.New()
	passed := func(echo.Context) error { return nil }
	for _, tc := range []struct{ query, field string }{
		{"from=2026-11-30&to=2026-12-06", "-"},
		{"q=a+b&week=", "-"},
		{"from=2026-11-30&to=%00", "to"},
		{"from=%FF", "from"},
		{"from=\xff", "from"},
		{"from=a\x00", "from"},
		{"fr%00om=1", ""},
		{"w=%E2%82%AC", "-"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/v1/x", nil)
		req.URL.RawQuery = tc.query
		err := TextOnly(passed)(e.NewContext(req, httptest.NewRecorder()))
		if tc.field == "-" {
			if err != nil {
				t.Errorf("%q: %v, want it passed", tc.query, err)
			}
			continue
		}
		if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Invalid || ae.Field() != tc.field {
			t.Errorf("%q: %v, want refused naming %q", tc.query, err, tc.field)
		}
	}
}
