package httpx

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"
)

// A database that went away or turned read-only under a request (a
// failover) is a 503 the client may retry after a pause, never a 500.
func TestStoreErrorsAreUnavailableWithRetryAfter(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"25006", "57P01", "08006"} {
		t.Run(code, func(t *testing.T) {
			err := fmt.Errorf("book: %w", &pgconn.PgError{Code: code, Message: "from the server"})
			e := echo.New()
			req := httptest.NewRequest(http.MethodPost, "/v1/appointment-types/x/book", nil)
			req.Header.Set("Accept", "application/json")
			rec := httptest.NewRecorder()
			(&Kit{}).HandleError(err, e.NewContext(req, rec))
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
				t.Fatalf("%s: status %d, Retry-After %q; want 503 with Retry-After", code, rec.Code, rec.Header().Get("Retry-After"))
			}
		})
	}
}
