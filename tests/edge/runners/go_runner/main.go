// The Go verifier's runner: reads a cases file (blake2sign_web/edge/vectors.json's schema) and prints one JSON
// line per vector, {"decision", "prefix", "below", "granted"}, in order. With --playlists: one line per
// "playlist_queries" case ({"query": string or null}), then one per "playlists" case ({"text": string}).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"

	"blake2signweb/linkcheck"
)

type cases struct {
	Keyrings map[string]json.RawMessage
	Vectors  []struct {
		Keyring string
		Now     float64
		Request struct {
			Method, Target, Host, Scheme string
			Cookie                       *string
		}
	}
	PlaylistQueries []struct{ Keyring, Target string } `json:"playlist_queries"`
	Playlists       []struct{ Text, Query, Path, Prefix string }
}

func main() {
	playlists := len(os.Args) == 3 && os.Args[2] == "--playlists"
	if len(os.Args) != 2 && !playlists {
		fmt.Fprintln(os.Stderr, "usage: runner CASES.json [--playlists]")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	check(err)
	var file cases
	check(json.Unmarshal(data, &file))
	keyrings := map[string]*linkcheck.Keyring{}
	for name, text := range file.Keyrings {
		keyrings[name], err = linkcheck.ParseKeyring(text)
		check(err)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	if playlists {
		for _, c := range file.PlaylistQueries {
			var line struct {
				Query *string `json:"query"`
			}
			if query, ok := linkcheck.PlaylistQuery(keyrings[c.Keyring], c.Target); ok {
				line.Query = &query
			}
			check(encoder.Encode(line))
		}
		for _, c := range file.Playlists {
			check(encoder.Encode(map[string]string{"text": linkcheck.SignPlaylist(c.Text, c.Query, c.Path, c.Prefix)}))
		}
		return
	}
	for _, v := range file.Vectors {
		r := v.Request
		request := linkcheck.Request{Method: r.Method, Target: r.Target, Host: r.Host, Scheme: r.Scheme}
		if r.Cookie != nil {
			request.Cookie = *r.Cookie
		}
		seconds, fraction := math.Modf(v.Now)
		now := time.Unix(int64(seconds), int64(fraction*1e9))
		check(encoder.Encode(linkcheck.Decide(keyrings[v.Keyring], request, now)))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
