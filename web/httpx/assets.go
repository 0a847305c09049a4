package httpx

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/static"
)

// Assets serves the embedded static files under /static/, each URL
// carrying the first bytes of the file's hash: a changed file gets a new
// URL, so every file can be cached for a year.
type Assets struct {
	hashes map[string]string
}

// NewAssets hashes every embedded file once.
func NewAssets() *Assets {
	a := &Assets{hashes: map[string]string{}}
	_ = fs.WalkDir(static.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := fs.ReadFile(static.FS, path)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(b)
		a.hashes[path] = hex.EncodeToString(sum[:6])
		return nil
	})
	return a
}

// URL is the versioned URL of a static file.
func (a *Assets) URL(name string) string {
	if h, ok := a.hashes[name]; ok {
		return "/static/" + name + "?v=" + h
	}
	return "/static/" + name
}

// Serve answers /static/*: versioned URLs are immutable, others revalidate.
func (a *Assets) Serve(c echo.Context) error {
	name := strings.TrimPrefix(c.Param("*"), "/")
	if _, ok := a.hashes[name]; !ok {
		return echo.ErrNotFound
	}
	if c.QueryParam("v") == a.hashes[name] {
		c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		c.Response().Header().Set("Cache-Control", "no-cache")
	}
	http.ServeFileFS(c.Response(), c.Request(), static.FS, name)
	return nil
}
