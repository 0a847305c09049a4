package httpx

import (
	"strings"
)

// BrowserName is a User-Agent in a short readable form, "Firefox on
// Linux", for a list of sessions; anything it cannot tell is "Other
// browser" or "on another system". Only these few words are stored, not
// the header.
func BrowserName(ua string) string {
	return browserOf(ua) + " on " + systemOf(ua)
}

func browserOf(ua string) string {
	// Order matters: Edge and Opera also say Chrome, Chrome also says Safari.
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"FxiOS/", "Firefox"},
		{"CriOS/", "Chrome"}, {"Chromium/", "Chromium"}, {"HeadlessChrome/", "Chrome (headless)"},
		{"Chrome/", "Chrome"}, {"Safari/", "Safari"}, {"curl/", "curl"}, {"Go-http-client/", "Go client"},
	} {
		if strings.Contains(ua, b.token) {
			return b.name
		}
	}
	return "Other browser"
}

func systemOf(ua string) string {
	for _, s := range []struct{ token, name string }{
		{"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Android", "Android"}, {"CrOS", "ChromeOS"},
		{"Windows", "Windows"}, {"Mac OS X", "macOS"}, {"Macintosh", "macOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, s.token) {
			return s.name
		}
	}
	return "another system"
}
