package linkcheck

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Options of Middleware; the zero value refuses what it cannot decide and reads the scheme from the connection.
type Options struct {
	// Unverifiable: "origin" passes what the edge cannot fully check (single-use links, groups, download names,
	// other keys, methods other than GET and HEAD) to next, which must then verify it; else they get 403.
	Unverifiable string
	// Scheme fixes the scheme a bound host is checked with ("https" behind a proxy that ends TLS); SchemeHeader
	// reads it from a header a trusted proxy sets (X-Forwarded-Proto). Neither: https when r.TLS is set.
	Scheme, SchemeHeader string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

type verdictKey struct{}

// VerdictOf is the verdict Middleware reached for r: next reads whether it was "allow" (and the folder and the
// path below it) or "origin" (next must verify the link itself).
func VerdictOf(r *http.Request) (Verdict, bool) {
	v, ok := r.Context().Value(verdictKey{}).(Verdict)
	return v, ok
}

// Middleware serves next what kr's links allow, answers 403 to what they refuse, and handles the rest as
// opts.Unverifiable says. A response to a request a grant cookie admitted is made private (Cache-Control: private,
// Vary: Cookie); a playlist (.m3u8, .m3u) served by a folder link in the URL has its URIs signed (SignPlaylist).
func Middleware(kr *Keyring, next http.Handler, opts Options) http.Handler {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		request := Request{
			Method: r.Method,
			Target: r.RequestURI, // as sent: r.URL is decoded and normalised
			Host:   r.Host,
			Scheme: opts.scheme(r),
			Cookie: strings.Join(r.Header.Values("Cookie"), "; "),
		}
		verdict := Decide(kr, request, now())
		if verdict.Decision != Allow && (verdict.Decision != Origin || opts.Unverifiable != Origin) {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), verdictKey{}, verdict))
		path, _, _ := strings.Cut(request.Target, "?")
		if verdict.Granted {
			private := &privateWriter{ResponseWriter: w}
			next.ServeHTTP(private, r)
			if !private.wrote { // an empty response is private too
				private.WriteHeader(http.StatusOK)
			}
			return
		}
		if verdict.Decision == Allow && verdict.Prefix != nil && IsPlaylist(path) {
			if query, ok := PlaylistQuery(kr, request.Target); ok {
				servePlaylist(w, r, next, func(text string) string {
					return SignPlaylist(text, query, path, *verdict.Prefix)
				})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (opts Options) scheme(r *http.Request) string {
	switch {
	case opts.Scheme != "":
		return opts.Scheme
	case opts.SchemeHeader != "":
		return strings.ToLower(r.Header.Get(opts.SchemeHeader))
	case r.TLS != nil:
		return "https"
	}
	return "http"
}

// privateWriter gives a granted response the Cache-Control and Vary that Private makes of the handler's own.
type privateWriter struct {
	http.ResponseWriter
	wrote bool
}

func (p *privateWriter) WriteHeader(status int) {
	if !p.wrote {
		p.wrote = true
		h := p.Header()
		cacheControl, vary := Private(strings.Join(h.Values("Cache-Control"), ", "), strings.Join(h.Values("Vary"), ", "))
		h.Set("Cache-Control", cacheControl)
		h.Set("Vary", vary)
	}
	p.ResponseWriter.WriteHeader(status)
}

func (p *privateWriter) Write(b []byte) (int, error) {
	if !p.wrote {
		p.WriteHeader(http.StatusOK)
	}
	return p.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (p *privateWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// Private is links/grants.py private: the Cache-Control and Vary of a response to a request a grant cookie
// admitted, from those the handler set ("": none). Its URL is no secret: no shared cache may keep it (no public
// or s-maxage, private unless no-store), and a browser keeps it per cookie.
func Private(cacheControl, vary string) (string, string) {
	var kept []string
	private := false
	for _, d := range strings.Split(cacheControl, ",") {
		d = strings.TrimSpace(d)
		lower := strings.ToLower(d)
		if d != "" && lower != "public" && !strings.HasPrefix(lower, "s-maxage") {
			kept = append(kept, d)
			private = private || lower == "private" || lower == "no-store"
		}
	}
	if !private {
		kept = append(kept, "private")
	}
	var varied []string
	cookie := false
	for _, v := range strings.Split(vary, ",") {
		if v = strings.TrimSpace(v); v != "" {
			varied = append(varied, v)
			cookie = cookie || v == "*" || strings.EqualFold(v, "cookie")
		}
	}
	if !cookie {
		varied = append(varied, "Cookie")
	}
	return strings.Join(kept, ", "), strings.Join(varied, ", ")
}

// maxPlaylist is the largest playlist rewritten, in bytes (playlists.MAX_SERVED_SIZE): a larger one gets 500.
const maxPlaylist = 1 << 20

var errTooLarge = errors.New("playlist too large to rewrite")

// servePlaylist serves next's 200 response to r, the whole file (no range, no conditions, no encoding asked),
// rewritten: a playlist with a signature in it is private and not stored, and its length and validators are no
// longer the file's. Any other status goes out as next wrote it.
func servePlaylist(w http.ResponseWriter, r *http.Request, next http.Handler, rewrite func(string) string) {
	inner := r.Clone(r.Context())
	for _, name := range []string{"Range", "If-Range", "If-None-Match", "If-Modified-Since", "Accept-Encoding"} {
		inner.Header.Del(name)
	}
	buffer := &playlistWriter{out: w, header: http.Header{}}
	next.ServeHTTP(buffer, inner)
	if buffer.status != 0 && buffer.status != http.StatusOK {
		return
	}
	if buffer.tooLarge {
		http.Error(w, "This playlist is too large to be sent by a folder link.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	for name, values := range buffer.header {
		h[name] = values
	}
	for _, name := range []string{"Content-Length", "Content-Range", "ETag", "Last-Modified", "Accept-Ranges"} {
		h.Del(name)
	}
	h.Set("Content-Type", "application/vnd.apple.mpegurl")
	h.Set("Cache-Control", "private, no-store")
	if r.Method == http.MethodHead { // no body to rewrite, so no length to tell
		w.WriteHeader(http.StatusOK)
		return
	}
	body := rewrite(buffer.body.String())
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, body)
}

// playlistWriter keeps a 200 response (headers and up to maxPlaylist bytes of body) and passes any other on.
type playlistWriter struct {
	out      http.ResponseWriter
	header   http.Header
	status   int
	body     bytes.Buffer
	tooLarge bool
}

func (p *playlistWriter) Header() http.Header { return p.header }

func (p *playlistWriter) WriteHeader(status int) {
	if p.status != 0 {
		return
	}
	p.status = status
	if status != http.StatusOK { // not the playlist: as next wrote it
		for name, values := range p.header {
			p.out.Header()[name] = values
		}
		p.out.WriteHeader(status)
	}
}

func (p *playlistWriter) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	if p.status != http.StatusOK {
		return p.out.Write(b)
	}
	if p.tooLarge || p.body.Len()+len(b) > maxPlaylist {
		p.tooLarge = true
		return 0, errTooLarge
	}
	return p.body.Write(b)
}
