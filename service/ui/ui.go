// Package ui is the demo page served at GET /: one HTML file, one stylesheet and one script,
// embedded in the binary. There is no build step and nothing is fetched at run time (no CDN, no
// web fonts), so the page works offline and behind a firewall, and changing it needs nothing but
// an editor. The page calls the same API as any other client, under the same CORS, auth and limits.
package ui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"path"
	"sync"
)

//go:embed index.html app.js app.css
var files embed.FS

// File is one embedded file with what a response needs to serve it.
type File struct {
	Body        []byte
	ContentType string
	// ETag is a strong validator derived from the content, so a browser revalidates cheaply and a
	// new binary's page is never mixed with an old cached script.
	ETag string
}

// Index is the page's name among the files.
const Index = "index.html"

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

var all = sync.OnceValue(func() map[string]File {
	m := map[string]File{}
	entries, _ := files.ReadDir(".")
	for _, e := range entries {
		body, err := files.ReadFile(e.Name())
		if err != nil {
			continue
		}
		sum := sha256.Sum256(body)
		m[e.Name()] = File{Body: body, ContentType: contentTypes[path.Ext(e.Name())], ETag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return m
})

// Lookup returns the embedded file called name ("index.html", "app.js", "app.css").
func Lookup(name string) (File, bool) {
	f, ok := all()[name]
	return f, ok
}

// ContentSecurityPolicy is sent with the page: scripts, styles and API calls from this origin
// only, images from the files a person picks (blob: URLs), no frames, no forms posted elsewhere.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
