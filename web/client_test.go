package web_test

// The HTTP side of the harness: requests, the answer read whole, and a
// browser without JavaScript (a cookie jar, a loopback address of its own,
// the CSRF token of the last page it saw).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// browserAccept is what a browser sends for a page.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// response is an answer, read whole.
type response struct {
	Status int
	Header http.Header
	Body   string
	t      testing.TB
	what   string
	doc    *goquery.Document
}

// newRequest is a request to u. body is left out when nil, sent as is
// (as JSON) when it is a string or []byte, as a form when it is
// url.Values, and marshalled as JSON otherwise. hdr are name, value pairs;
// an empty value leaves the header out.
func newRequest(t testing.TB, method, u string, body any, hdr ...string) *http.Request {
	t.Helper()
	var r io.Reader
	ct := "application/json"
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	case url.Values:
		r, ct = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	return req
}

// exchange sends req with hc and reads the answer whole.
func exchange(t testing.TB, hc *http.Client, req *http.Request) *response {
	t.Helper()
	what := req.Method + " " + req.URL.Path
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s: read: %v", what, err)
	}
	return &response{Status: res.StatusCode, Header: res.Header, Body: string(b), t: t, what: what}
}

// do sends one request to the app with a plain client (see newRequest for
// body and hdr).
func (a *app) do(t testing.TB, method, path string, body any, hdr ...string) *response {
	t.Helper()
	return exchange(t, a.hc, newRequest(t, method, a.URL+path, body, hdr...))
}

// Decode decodes the body, failing the test when it is not the JSON expected.
func (r *response) Decode(v any) {
	r.t.Helper()
	if err := json.Unmarshal([]byte(r.Body), v); err != nil {
		r.t.Fatalf("%s: body %q is not the JSON expected: %v", r.what, r.Body, err)
	}
}

// Doc parses the body as HTML.
func (r *response) Doc() *goquery.Document {
	r.t.Helper()
	if r.doc == nil {
		d, err := goquery.NewDocumentFromReader(strings.NewReader(r.Body))
		if err != nil {
			r.t.Fatalf("%s: parse HTML: %v", r.what, err)
		}
		r.doc = d
	}
	return r.doc
}

// Want fails the test unless the status is want.
func (r *response) Want(want int) *response {
	r.t.Helper()
	if r.Status != want {
		r.t.Fatalf("%s: status %d, want %d; body:\n%s", r.what, r.Status, want, clip(r.Body, 3000))
	}
	return r
}

// WantRedirect fails unless the answer is 303 to loc.
func (r *response) WantRedirect(loc string) *response {
	r.t.Helper()
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != loc {
		r.t.Fatalf("%s: %d to %q, want 303 to %q; body:\n%s", r.what, r.Status, r.Header.Get("Location"), loc, clip(r.Body, 1500))
	}
	return r
}

// Text is the collapsed text of what sel finds.
func (r *response) Text(sel string) string {
	r.t.Helper()
	return text(r.Doc().Find(sel))
}

// Form is the form sel finds, as a browser would send it.
func (r *response) Form(sel string) form {
	r.t.Helper()
	return formOf(r.t, r.Doc().Find(sel), sel)
}

// Cookie is the cookie named name the answer sets, or nil.
func (r *response) Cookie(name string) *http.Cookie {
	for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

// client is a browser without JavaScript: a cookie jar, no automatic
// redirects, an address of its own (it connects from a random 127.x.y.z,
// so per-address limits count its requests alone), and the CSRF token of
// the last page it saw.
type client struct {
	t    testing.TB
	base string
	jar  http.CookieJar
	hc   *http.Client
	IP   string
	CSRF string
	// Header is added to every request.
	Header http.Header
}

// newClient is a browser on the app, connecting from a random loopback address.
func (a *app) newClient(t testing.TB) *client {
	t.Helper()
	return newClientAt(t, a.URL, randomLoopback())
}

// randomLoopback is a random address of 127.0.0.0/8.
func randomLoopback() string {
	return fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254))
}

// clientAt is a browser on the app connecting from ip: browsers of one
// network, which per-address limits count together.
func (a *app) clientAt(t testing.TB, ip string) *client {
	t.Helper()
	return newClientAt(t, a.URL, ip)
}

func newClientAt(t testing.TB, base, ip string) *client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: 4}
	t.Cleanup(tr.CloseIdleConnections)
	return &client{t: t, base: base, jar: jar, IP: ip, Header: http.Header{},
		hc: &http.Client{Jar: jar, Timeout: 60 * time.Second, Transport: tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// clientWithSession is a fresh browser that carries only the session
// cookie value.
func (a *app) clientWithSession(t testing.TB, value string) *client {
	t.Helper()
	c := a.newClient(t)
	u, _ := url.Parse(a.URL)
	c.jar.SetCookies(u, []*http.Cookie{{Name: "clinic_session", Value: value, Path: "/"}})
	return c
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// exchange sends req with the client's headers and keeps the CSRF token
// the answer shows.
func (c *client) exchange(req *http.Request) *response {
	c.t.Helper()
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	r := exchange(c.t, c.hc, req)
	if m := csrfField.FindStringSubmatch(r.Body); m != nil {
		c.CSRF = m[1]
	}
	return r
}

// do sends a request as the browser does (it accepts a page), with hdr
// added.
func (c *client) do(method, path string, body io.Reader, hdr http.Header) *response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", browserAccept)
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	return c.exchange(req)
}

// send sends a request as a script would (see newRequest), with the
// browser's cookies and address.
func (c *client) send(method, path string, body any, hdr ...string) *response {
	c.t.Helper()
	return c.exchange(newRequest(c.t, method, c.base+path, body, hdr...))
}

// Get fetches a page.
func (c *client) Get(path string) *response {
	c.t.Helper()
	return c.do(http.MethodGet, path, nil, nil)
}

// Post posts a form with the client's CSRF token, when it has one and the
// form has none.
func (c *client) Post(path string, form url.Values) *response {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if !form.Has("_csrf") && c.CSRF != "" {
		form = cloneValues(form)
		form.Set("_csrf", c.CSRF)
	}
	return c.PostRaw(path, form, nil)
}

// PostRaw posts the form as given.
func (c *client) PostRaw(path string, form url.Values, hdr http.Header) *response {
	c.t.Helper()
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	for k, vs := range hdr {
		h[k] = vs
	}
	return c.do(http.MethodPost, path, strings.NewReader(form.Encode()), h)
}

// HXPost posts a form as htmx does.
func (c *client) HXPost(path string, form url.Values) *response {
	c.t.Helper()
	return c.PostRaw(path, form, http.Header{"Hx-Request": {"true"}, "Accept": {"text/html, */*"}})
}

// Cookie is the client's session cookie value.
func (c *client) Cookie() string {
	u, _ := url.Parse(c.base)
	for _, ck := range c.jar.Cookies(u) {
		if ck.Name == "clinic_session" {
			return ck.Value
		}
	}
	return ""
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// form is a form as a browser would send it: where it posts and its values.
type form struct {
	Action string
	Values url.Values
}

// formOf reads the form sel is (or is in): the values of its named fields
// as a browser sends them (checked boxes only, a select's chosen option,
// no buttons).
func formOf(t testing.TB, sel *goquery.Selection, what string) form {
	t.Helper()
	f := sel.First()
	if f.Length() == 0 {
		t.Fatalf("%s: no such form", what)
	}
	if !f.Is("form") {
		f = f.Closest("form")
	}
	if f.Length() == 0 {
		t.Fatalf("%s: not in a form", what)
	}
	action, _ := f.Attr("action")
	v := url.Values{}
	f.Find("input[name], select[name], textarea[name]").Each(func(_ int, in *goquery.Selection) {
		name, _ := in.Attr("name")
		if val, ok := fieldValue(in); ok {
			v.Add(name, val)
		}
	})
	return form{Action: action, Values: v}
}

// fieldValue is what a browser sends for one field, and whether it sends it.
func fieldValue(in *goquery.Selection) (string, bool) {
	typ, _ := in.Attr("type")
	switch {
	case in.Is("select"):
		opt := in.Find("option[selected]").First()
		if opt.Length() == 0 {
			opt = in.Find("option").First()
		}
		val, _ := opt.Attr("value")
		return val, true
	case in.Is("textarea"):
		return in.Text(), true
	case typ == "checkbox" || typ == "radio":
		if _, on := in.Attr("checked"); !on {
			return "", false
		}
		if val, ok := in.Attr("value"); ok {
			return val, true
		}
		return "on", true
	case typ == "submit" || typ == "button":
		return "", false
	}
	val, _ := in.Attr("value")
	return val, true
}

// text is a selection's text with white space collapsed.
func text(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }

// clip is s cut to n bytes, for a failure message.
func clip[T string | []byte](s T, n int) string {
	if len(s) > n {
		return string(s[:n]) + "…"
	}
	return string(s)
}

// retryAfter is the Retry-After header in seconds, failing when it is missing.
func retryAfter(t testing.TB, r *response) int {
	t.Helper()
	n, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || n < 1 {
		t.Fatalf("Retry-After %q, want whole seconds >= 1", r.Header.Get("Retry-After"))
	}
	return n
}
