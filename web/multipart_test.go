package web_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/clinic/booking/web"
)

// FormValue reads multipart bodies too, so a form sent as multipart is
// checked like any other: a NUL in it is a 400 naming the field, never a
// database error.
func TestMultipartFormsAreCheckedLikeUrlencodedOnes(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	stfNewClinic(t, app.Pool, 1)
	cl := stfNewClient(t, app.TS.URL)
	cl.Get("/staff/login").Want(http.StatusOK)

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range map[string]string{"email": "a\x00b@example.org", "password": stfPassword, "_csrf": cl.CSRF} {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	r := cl.do("POST", "/staff/login", &body, http.Header{"Content-Type": {mw.FormDataContentType()}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "email") {
		t.Fatalf("multipart sign-in with a NUL in the e-mail: %d %s, want 400 naming email", r.Status, pgClip(r.Body, 300))
	}
}
