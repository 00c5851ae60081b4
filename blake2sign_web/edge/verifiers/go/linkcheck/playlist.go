package linkcheck

import (
	"regexp"
	"strings"
	"unicode"
)

// PlaylistQuery is the query an allowed folder link's playlist passes on to its URIs (reference.playlist_query):
// the target's pairs less the ignored ones, encoded again, in the order sent; false when the target has no
// signature (a request a grant cookie admitted: the cookie covers the URIs).
func PlaylistQuery(kr *Keyring, target string) (string, bool) {
	target, _, _ = strings.Cut(target, "#")
	_, query, _ := strings.Cut(target, "?")
	var fields []string
	signed := false
	for _, kv := range parseQuery(query) {
		if !kr.ignored(kv.name) {
			signed = signed || kv.name == kr.Params.Signature
			fields = append(fields, encode(kv.name)+"="+encode(kv.value))
		}
	}
	if !signed {
		return "", false
	}
	return strings.Join(fields, "&"), true
}

// IsPlaylist: the path names an HLS (M3U) playlist, .m3u8 or .m3u in any case.
func IsPlaylist(path string) bool {
	path = strings.ToLower(path)
	return strings.HasSuffix(path, ".m3u8") || strings.HasSuffix(path, ".m3u")
}

var (
	lineBreak      = regexp.MustCompile(`\r\n|\r|\n`)
	simpleRelative = regexp.MustCompile(`^[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]+)*$`)
	attribute      = regexp.MustCompile(`^([A-Z0-9-]+)=("[^"\r\n]*"|[^",]*)`)
	uriTags        = map[string]bool{"EXT-X-KEY": true, "EXT-X-SESSION-KEY": true, "EXT-X-MAP": true,
		"EXT-X-MEDIA": true, "EXT-X-I-FRAME-STREAM-INF": true, "EXT-X-PART": true, "EXT-X-PRELOAD-HINT": true,
		"EXT-X-RENDITION-REPORT": true, "EXT-X-SESSION-DATA": true}
)

// SignPlaylist is links/playlists.py front_server_rewrite: the playlist text served at playlistPath (the request's path as sent)
// by a folder link of prefix, with "?" and query after each URI of the simple kind (segments of unreserved
// characters, no dot segment) that resolves inside prefix, on URI lines and in the URI attribute of the tags
// that have one; every other URI, line and line ending as it was.
func SignPlaylist(text, query, playlistPath, prefix string) string {
	folder := playlistPath[:strings.LastIndex(playlistPath, "/")+1]
	add := func(uri string) string {
		if !simpleRelative.MatchString(uri) {
			return uri
		}
		for _, segment := range strings.Split(uri, "/") {
			if segment == "." || segment == ".." {
				return uri
			}
		}
		if _, inside := below(folder+uri, prefix); inside {
			return uri + "?" + query
		}
		return uri
	}
	var out strings.Builder
	start := 0
	for _, brk := range lineBreak.FindAllStringIndex(text, -1) {
		out.WriteString(signLine(text[start:brk[0]], add))
		out.WriteString(text[brk[0]:brk[1]])
		start = brk[1]
	}
	out.WriteString(signLine(text[start:], add))
	return out.String()
}

// pythonSpace is what Python's str.strip removes: Unicode's white space and the separators U+001C to U+001F.
func pythonSpace(r rune) bool { return unicode.IsSpace(r) || 0x1c <= r && r <= 0x1f }

// signLine is playlists._line: a URI line, or a tag's attribute list, with its URIs signed.
func signLine(line string, add func(string) string) string {
	content := strings.TrimFunc(strings.TrimLeft(line, "\ufeff"), pythonSpace)
	if content == "" {
		return line
	}
	start := strings.Index(line, content)
	if !strings.HasPrefix(content, "#") {
		return line[:start] + add(content) + line[start+len(content):]
	}
	name, _, colon := strings.Cut(content[1:], ":")
	if !colon || !uriTags[name] {
		return line
	}
	start += len(name) + 2
	return line[:start] + signAttributes(line[start:], add)
}

// signAttributes is playlists._attributes: NAME=value items separated by ",", the quoted URI signed; a list that
// cannot be read so is left as it is.
func signAttributes(text string, add func(string) string) string {
	var out strings.Builder
	for position := 0; position < len(text); {
		found := attribute.FindStringSubmatch(text[position:])
		if found == nil {
			return text
		}
		value := found[2]
		if found[1] == "URI" && len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = `"` + add(value[1:len(value)-1]) + `"`
		}
		out.WriteString(found[1] + "=" + value)
		position += len(found[0])
		if position < len(text) {
			if text[position] != ',' {
				rest := text[position:]
				if strings.TrimFunc(rest, pythonSpace) != "" {
					return text
				}
				out.WriteString(rest)
				break
			}
			out.WriteString(",")
			position++
		}
	}
	return out.String()
}
