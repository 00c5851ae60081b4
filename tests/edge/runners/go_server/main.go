// A file server behind the Go verifier, for the end-to-end test: it serves -root to what the keyring's links
// allow; "origin" verdicts (with -unverifiable origin) get a stand-in for the origin application instead.
// Granted responses are made private and folder links' playlists rewritten by the middleware. It listens on a free
// 127.0.0.1 port and prints its URL on the first line.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"

	"blake2signweb/linkcheck"
)

func main() {
	keyring := flag.String("keyring", "", "the keyring file")
	root := flag.String("root", "", "the folder to serve")
	unverifiable := flag.String("unverifiable", "refuse", `"origin": pass what the edge cannot check to the origin`)
	flag.Parse()
	kr, err := linkcheck.LoadKeyring(*keyring)
	if err != nil {
		log.Fatal(err)
	}
	files := http.FileServer(http.Dir(*root))
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		verdict, _ := linkcheck.VerdictOf(r)
		w.Header().Set("X-Edge-Decision", verdict.Decision)
		if verdict.Decision == linkcheck.Origin { // the origin application would verify the link itself
			fmt.Fprintln(w, "origin")
			return
		}
		files.ServeHTTP(w, r)
	})
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s\n", listener.Addr())
	handler := linkcheck.Middleware(kr, next, linkcheck.Options{Unverifiable: *unverifiable})
	log.Fatal(http.Serve(listener, handler))
}
