package linkcheck

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

type vectorsFile struct {
	Keyrings map[string]json.RawMessage
	Vectors  []struct {
		Name, Keyring string
		Now           int64
		Request       struct{ Method, Target, Host, Scheme, Cookie string }
		Expect        Verdict
	}
	PlaylistQueries []struct {
		Keyring, Target string
		Expect          *string
	} `json:"playlist_queries"`
	Playlists []struct{ Name, Text, Query, Path, Prefix, Expect string }
}

func readVectors(t *testing.T) vectorsFile {
	var file vectorsFile
	data, err := os.ReadFile("../../../vectors.json")
	if err == nil {
		err = json.Unmarshal(data, &file)
	}
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// The shared vectors (blake2sign_web/edge/vectors.json): each decision, prefix and below as the reference's.
func TestVectors(t *testing.T) {
	file := readVectors(t)
	for _, v := range file.Vectors {
		kr, err := ParseKeyring(file.Keyrings[v.Keyring])
		if err != nil {
			t.Fatal(err)
		}
		got := Decide(kr, Request(v.Request), time.Unix(v.Now, 0))
		if got.Decision != v.Expect.Decision || text(got.Prefix) != text(v.Expect.Prefix) ||
			text(got.Below) != text(v.Expect.Below) || got.Granted != v.Expect.Granted {
			t.Errorf("%s: got %s %s %s %v (%s), want %s %s %s %v", v.Name, got.Decision, text(got.Prefix),
				text(got.Below), got.Granted, got.Why, v.Expect.Decision, text(v.Expect.Prefix),
				text(v.Expect.Below), v.Expect.Granted)
		}
	}
}

// The shared playlist vectors: the query passed on, and the playlists rewritten, as the reference's.
func TestPlaylists(t *testing.T) {
	file := readVectors(t)
	for _, c := range file.PlaylistQueries {
		kr, err := ParseKeyring(file.Keyrings[c.Keyring])
		if err != nil {
			t.Fatal(err)
		}
		got := "null"
		if query, ok := PlaylistQuery(kr, c.Target); ok {
			got = query
		}
		if got != text(c.Expect) {
			t.Errorf("%s: got %s, want %s", c.Target, got, text(c.Expect))
		}
	}
	for _, c := range file.Playlists {
		if got := SignPlaylist(c.Text, c.Query, c.Path, c.Prefix); got != c.Expect {
			t.Errorf("%s: got %q, want %q", c.Name, got, c.Expect)
		}
	}
}

func TestPrivate(t *testing.T) {
	for _, c := range [][4]string{
		{"", "", "private", "Cookie"},
		{"public, max-age=60, s-maxage=600", "Accept-Encoding", "max-age=60, private", "Accept-Encoding, Cookie"},
		{"no-store", "*", "no-store", "*"},
		{"Private", "cookie", "Private", "cookie"},
	} {
		if cacheControl, vary := Private(c[0], c[1]); cacheControl != c[2] || vary != c[3] {
			t.Errorf("Private(%q, %q) = %q, %q, want %q, %q", c[0], c[1], cacheControl, vary, c[2], c[3])
		}
	}
}

func text(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// The middleware: an allowed link reaches next with its verdict, a refused one gets 403, and an unverifiable
// one (a POST here) reaches next only when the options send it to the origin.
func TestMiddleware(t *testing.T) {
	kr, err := ParseKeyring(readVectors(t).Keyrings["plain"])
	if err != nil {
		t.Fatal(err)
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		verdict, _ := VerdictOf(r)
		w.Header().Set("X-Decision", verdict.Decision)
	})
	at := func() time.Time { return time.Unix(1800000000, 0) }
	link := "/files/report.pdf?expires=1800003600&kid=KYi92k&signature=4944XrTSxCVrn6b9SnPi4ljsqKP9ejz72-F9oJBXJEM"
	for _, c := range []struct {
		method, target, unverifiable string
		status                       int
		decision                     string
	}{
		{"GET", link, "", 200, Allow},
		{"GET", link[:len(link)-1] + "A", "", 403, ""},
		{"GET", "/files/report.pdf", "", 403, ""},
		{"POST", link, "", 403, ""},
		{"POST", link, Origin, 200, Origin},
	} {
		w := httptest.NewRecorder()
		Middleware(kr, next, Options{Unverifiable: c.unverifiable, Now: at}).ServeHTTP(w, httptest.NewRequest(c.method, c.target, nil))
		if w.Code != c.status || w.Header().Get("X-Decision") != c.decision {
			t.Errorf("%s %s: %d %q, want %d %q", c.method, c.target, w.Code, w.Header().Get("X-Decision"), c.status, c.decision)
		}
	}
}
