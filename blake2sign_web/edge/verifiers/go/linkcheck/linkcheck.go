// Package linkcheck verifies blake2sign_web's signed links and grant cookies at a front server, from a keyring
// file alone: it decides as the Python reference does (blake2sign_web/edge/reference.py, docs/link-format.md,
// "Deciding"), and the shared test vectors and fuzz cases hold it to that.
//
// Text is handled as bytes throughout: a decoded query name or value is the bytes its escapes give, which is
// what Python's surrogateescape decoding keeps distinct; net/url is not used, as it rejects or normalises
// paths that Python keeps as they are.
package linkcheck

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The three answers: serve the file, answer 403, or leave it to the origin (what an edge cannot fully check).
const (
	Allow  = "allow"
	Refuse = "refuse"
	Origin = "origin"
)

const (
	macLength      = 43 // unpadded base64url of a 32-byte HMAC-SHA-256 tag
	clockSkew      = 60 // seconds a link is honoured before its start
	grantName      = "b2s_grant_"
	maxGrantValue  = 600
	maxGrantDepth  = 16
	maxDecodings   = 3
	keyIDLabel     = "blake2sign_web key id v1\x00hmac-sha256\x00"
	defaultURLSize = 8192
)

// Key is one derived link key and its public id.
type Key struct {
	ID  string
	Key []byte
}

// Parameters are the query parameter names of a link's own fields.
type Parameters struct {
	Signature   string `json:"signature"`
	Expires     string `json:"expires"`
	Nonce       string `json:"nonce"`
	Consume     string `json:"consume"`
	Disposition string `json:"disposition"`
	Filename    string `json:"filename"`
	Starts      string `json:"starts"`
	Prefix      string `json:"prefix"`
	Group       string `json:"group"`
	Issued      string `json:"issued"`
	KeyID       string `json:"key_id"`
}

// Keyring is one purpose's link keys (the current one first) and the link options a verifier must know.
type Keyring struct {
	Keys         []Key
	Params       Parameters
	Ignore       []string // fnmatch patterns of "*" and "?" on decoded parameter names
	BindHost     bool
	MaxURLLength int
}

// Request is what a front server has of a request: Target is the request line's path and query as sent.
type Request struct {
	Method, Target, Host, Scheme, Cookie string
}

// Verdict is the decision; for an allowed folder link or grant, its Prefix and the decoded path Below it, and
// whether a grant cookie admitted the request (Granted: its response must be private, Vary: Cookie).
// Why is for people (logs), never compared.
type Verdict struct {
	Decision string  `json:"decision"`
	Prefix   *string `json:"prefix"`
	Below    *string `json:"below"`
	Granted  bool    `json:"granted"`
	Why      string  `json:"-"`
}

// LoadKeyring reads a keyring file as blake2sign_web.edge.keyring writes it.
func LoadKeyring(path string) (*Keyring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseKeyring(data)
}

// ParseKeyring reads a keyring's JSON text; an error for anything the Python keyring.load would refuse.
func ParseKeyring(data []byte) (*Keyring, error) {
	var file struct {
		Version    int    `json:"keyring"`
		Algorithm  string `json:"algorithm"`
		Keys       []struct{ ID, Key string }
		Parameters json.RawMessage `json:"parameters"`
		Ignore     []string        `json:"ignore"`
		BindHost   bool            `json:"bind_host"`
		MaxURL     *int            `json:"max_url_length"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, err
	}
	if file.Version != 1 || file.Algorithm != "hmac-sha256" {
		return nil, errors.New("not a keyring of version 1 for hmac-sha256")
	}
	kr := &Keyring{Ignore: file.Ignore, BindHost: file.BindHost, MaxURLLength: defaultURLSize}
	if file.MaxURL != nil {
		kr.MaxURLLength = *file.MaxURL
	}
	if err := json.Unmarshal(file.Parameters, &kr.Params); err != nil {
		return nil, err
	}
	for _, k := range file.Keys {
		raw, err := base64.RawURLEncoding.DecodeString(k.Key)
		if err != nil || len(raw) != 32 || keyID(raw) != k.ID {
			return nil, fmt.Errorf("key %q: a keyring's keys are 32 bytes each under their own id", k.ID)
		}
		kr.Keys = append(kr.Keys, Key{k.ID, raw})
	}
	if len(kr.Keys) == 0 {
		return nil, errors.New("a keyring needs at least one key")
	}
	return kr, nil
}

func keyID(key []byte) string {
	digest := sha256.Sum256(append([]byte(keyIDLabel), key...))
	return base64.URLEncoding.EncodeToString(digest[:])[:6]
}

// errMismatch: no key of the keyring made the MAC (another key, or a link bound to a user): the origin decides.
var errMismatch = errors.New("not signed by a key of this keyring (or bound to a user)")

type refusal string

func (r refusal) Error() string { return string(r) }

// Decide is the verdict of a front server holding kr on r at now.
func Decide(kr *Keyring, r Request, now time.Time) Verdict {
	if r.Method != "GET" && r.Method != "HEAD" {
		return Verdict{Decision: Origin, Why: "a method other than GET or HEAD"}
	}
	if !strings.HasPrefix(r.Target, "/") || !isASCII(r.Target) {
		return Verdict{Decision: Refuse, Why: "a request target that is not an ASCII path"}
	}
	url := r.Target
	if kr.BindHost {
		if !hostHeader.MatchString(r.Host) || r.Scheme != "http" && r.Scheme != "https" {
			return Verdict{Decision: Refuse, Why: "a malformed Host header or scheme"}
		}
		url = r.Scheme + "://" + r.Host + r.Target
	}
	var l link
	var err error
	value, granted := kr.grantFor(url, r.Cookie)
	if granted {
		l, err = kr.verifyGrant(url, value, now)
	} else {
		l, err = kr.verifyLink(url, now)
	}
	if errors.Is(err, errMismatch) {
		return Verdict{Decision: Origin, Why: err.Error()}
	}
	if err != nil {
		return Verdict{Decision: Refuse, Why: err.Error()}
	}
	if l.forOrigin {
		return Verdict{Decision: Origin, Why: "single use, a group or a download name: the origin decides"}
	}
	if !l.folder {
		path, _, _ := strings.Cut(r.Target, "?")
		if problem := pathProblem(path); problem != "" { // a file server would resolve it to another file
			return Verdict{Decision: Refuse, Why: "unsafe path: " + problem}
		}
		return Verdict{Decision: Allow, Why: "valid"}
	}
	return Verdict{Decision: Allow, Prefix: &l.prefix, Below: &l.below, Granted: granted, Why: "valid"}
}

// hostHeader is the Host header a host-bound link is checked against: a name or IPv4 address, or an IPv6 one in
// brackets, and a port.
var hostHeader = regexp.MustCompile(`^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$`)

// link is what a verified link says that the decision needs.
type link struct {
	folder        bool
	prefix, below string
	forOrigin     bool // single use, a group or a download name
}

type pair struct{ name, value string }

// verifyLink is URLSigner.verify_link under the keyring's keys.
func (kr *Keyring) verifyLink(url string, now time.Time) (link, error) {
	p := kr.Params
	if utf8.RuneCountInString(url) > kr.MaxURLLength {
		return link{}, refusal("URL too long")
	}
	scheme, netloc, path, query, err := split(url)
	if err != nil {
		return link{}, err
	}
	var signatures []string
	var pairs []pair
	for _, kv := range parseQuery(query) {
		if kv.name == p.Signature {
			signatures = append(signatures, kv.value)
		} else if !kr.ignored(kv.name) {
			pairs = append(pairs, kv)
		}
	}
	if len(signatures) != 1 {
		return link{}, refusal("URL has no signature, or more than one")
	}
	expires, nonces, starts, prefixes, keyIDs := values(pairs, p.Expires), values(pairs, p.Nonce),
		values(pairs, p.Starts), values(pairs, p.Prefix), values(pairs, p.KeyID)
	if len(expires) > 1 || len(nonces) > 1 || len(starts) > 1 || len(keyIDs) > 1 {
		return link{}, refusal("URL repeats an expiry, nonce, start or key id")
	}
	host := kr.host(scheme, netloc)
	var canonical string
	if len(prefixes) > 0 { // a folder link: its MAC covers the prefix, in its own form
		if err := checkPrefix(prefixes); err != nil {
			return link{}, err
		}
		canonical = "url1p" + strings.TrimPrefix(canonicalForm(host, prefixes[0], pairs), "url1")
	} else {
		canonical = canonicalForm(host, canonicalPath(path), pairs)
	}
	if !isASCII(canonical) { // a prefix decoded to non-ASCII: Python cannot encode the form either
		return link{}, refusal("URL is not valid text")
	}
	if kr.BindHost && host == "" {
		return link{}, refusal("the keyring binds the host: the URL has none")
	}
	signature := signatures[0]
	if utf8.RuneCountInString(signature) != macLength { // Python's len: a byte that is not UTF-8 counts one
		return link{}, refusal("malformed signature")
	}
	if err := kr.checkMAC(canonical, signature, keyIDs); err != nil {
		return link{}, err
	}
	// The MAC holds: what follows refuses a link sign() never writes, or one out of its time.
	expiresAt, err := verifiedTimes(expires, starts, now)
	if err != nil {
		return link{}, err
	}
	if len(nonces) == 1 {
		if !nonceText.MatchString(nonces[0]) {
			return link{}, refusal("malformed nonce")
		}
		if expiresAt == nil {
			return link{}, refusal("single-use URL without expiry")
		}
	}
	hasDisposition, err := kr.checkLinkOptions(pairs, len(nonces) == 1)
	if err != nil {
		return link{}, err
	}
	grouped := false
	for _, kv := range pairs {
		grouped = grouped || kv.name == p.Group || kv.name == p.Issued
	}
	if grouped {
		if err := kr.checkGroup(pairs, expiresAt != nil); err != nil {
			return link{}, err
		}
	}
	if len(prefixes) == 0 {
		return link{forOrigin: len(nonces) == 1 || grouped || hasDisposition}, nil
	}
	if len(nonces) == 1 || hasDisposition {
		return link{}, refusal("folder URL with a nonce or a download name")
	}
	rest, ok := below(path, prefixes[0])
	if !ok {
		return link{}, refusal("path is not inside the signed prefix")
	}
	return link{folder: true, prefix: prefixes[0], below: rest, forOrigin: grouped}, nil
}

func values(pairs []pair, name string) []string {
	var found []string
	for _, kv := range pairs {
		if kv.name == name {
			found = append(found, kv.value)
		}
	}
	return found
}

// checkPrefix: a folder link has one prefix, of the shape sign writes (a path ending with "/", on one line).
func checkPrefix(prefixes []string) error {
	if len(prefixes) != 1 {
		return refusal("URL has more than one prefix")
	}
	prefix := prefixes[0]
	if !strings.HasPrefix(prefix, "/") || !strings.HasSuffix(prefix, "/") || strings.Contains(prefix, "\n") {
		return refusal("malformed prefix")
	}
	return nil
}

// canonicalForm is the text the MAC covers: host, path and the query's pairs (less the signature) stably sorted
// by decoded name in Python's code point order; the bound value is always empty at the edge.
func canonicalForm(host, path string, pairs []pair) string {
	kept := append([]pair(nil), pairs...) // pairs: the query's, less the signature and ignored names
	sort.SliceStable(kept, func(i, j int) bool { return lessCodePoints(kept[i].name, kept[j].name) })
	fields := make([]string, len(kept))
	for i, kv := range kept {
		fields[i] = encode(kv.name) + "=" + encode(kv.value)
	}
	return "url1\n" + host + "\n" + path + "\n" + strings.Join(fields, "&") + "\n"
}

// checkMAC: the key the link names (an unknown id: the origin may hold it), or else each key, in turn.
func (kr *Keyring) checkMAC(canonical, signature string, keyIDs []string) error {
	keys := kr.Keys
	if len(keyIDs) == 1 {
		keys = nil
		for _, k := range kr.Keys {
			if k.ID == keyIDs[0] {
				keys = append(keys, k)
			}
		}
		if keys == nil {
			return fmt.Errorf("unknown key id: %w", errMismatch)
		}
	}
	if len(canonical)+macLength > 2*kr.MaxURLLength+64 {
		return refusal("token too long")
	}
	for _, k := range keys {
		mac := hmac.New(sha256.New, k.Key)
		mac.Write([]byte(canonical))
		// Compare the encoded text, in constant time: a re-encoded tag must not verify.
		if hmac.Equal([]byte(base64.RawURLEncoding.EncodeToString(mac.Sum(nil))), []byte(signature)) {
			return nil
		}
	}
	return errMismatch
}

// verifiedTimes checks the expiry and start (1 to 10 digits each) against now; the expiry, nil without one.
func verifiedTimes(expires, starts []string, now time.Time) (*int64, error) {
	var expiresAt, startsAt *int64
	for _, t := range []struct {
		text []string
		into **int64
	}{{expires, &expiresAt}, {starts, &startsAt}} {
		if len(t.text) == 1 {
			if !unixTime.MatchString(t.text[0]) {
				return nil, refusal("malformed expiry or start")
			}
			value, _ := strconv.ParseInt(t.text[0], 10, 64)
			*t.into = &value
		}
	}
	if expiresAt != nil && startsAt != nil && *startsAt >= *expiresAt {
		return nil, refusal("URL starts at or after its expiry")
	}
	if expiresAt != nil && !now.Before(time.Unix(*expiresAt, 0)) {
		return nil, refusal("signed URL has expired")
	}
	if startsAt != nil && now.Before(time.Unix(*startsAt-clockSkew, 0)) {
		return nil, refusal("signed URL is not valid yet")
	}
	return expiresAt, nil
}

var (
	unixTime   = regexp.MustCompile(`^[0-9]{1,10}$`)
	nonceText  = regexp.MustCompile(`^[A-Za-z0-9_-]{16,64}$`)
	groupID    = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	issuedText = regexp.MustCompile(`^[0-9]{1,16}$`)
)

// checkLinkOptions is read_link_options without the filename check: consume and disposition as sign writes
// them; whether the link names its download (a disposition), which the origin serves.
func (kr *Keyring) checkLinkOptions(pairs []pair, hasNonce bool) (bool, error) {
	consumes, dispositions, filenames := values(pairs, kr.Params.Consume), values(pairs, kr.Params.Disposition),
		values(pairs, kr.Params.Filename)
	if len(consumes) > 1 || len(dispositions) > 1 || (len(dispositions) == 1 && len(filenames) > 1) {
		return false, refusal("URL repeats a consume, disposition or filename parameter")
	}
	if len(consumes) == 1 && (consumes[0] != "post" || !hasNonce) {
		return false, refusal("malformed consume parameter, or one on a URL that is not single-use")
	}
	if len(dispositions) == 0 { // a filename alone is the application's own parameter
		return false, nil
	}
	if dispositions[0] != "attachment" && dispositions[0] != "inline" {
		return false, refusal("malformed disposition")
	}
	return true, nil // the download name is the origin's to judge

}

// checkGroup is groups.verified: one group and one issue time, well formed, on a link that expires.
func (kr *Keyring) checkGroup(pairs []pair, expires bool) error {
	groups, issued := values(pairs, kr.Params.Group), values(pairs, kr.Params.Issued)
	if len(groups) != 1 || len(issued) != 1 {
		return refusal("URL needs one group and one issue time")
	}
	if !groupID.MatchString(groups[0]) || !issuedText.MatchString(issued[0]) {
		return refusal("malformed group or issue time")
	}
	if !expires {
		return refusal("grouped URL without expiry")
	}
	return nil
}

// ignored: the decoded name matches an ignore pattern ("*" any run of characters, "?" one).
func (kr *Keyring) ignored(name string) bool {
	points := codePoints(name)
	for _, pattern := range kr.Ignore {
		if wildcard([]rune(pattern), points) {
			return true
		}
	}
	return false
}

func wildcard(pattern, name []rune) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for i := len(name); i >= 0; i-- {
				if wildcard(pattern[1:], name[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(name) == 0 {
				return false
			}
		default:
			if len(name) == 0 || name[0] != pattern[0] {
				return false
			}
		}
		pattern, name = pattern[1:], name[1:]
	}
	return len(name) == 0
}

var defaultPorts = map[string]string{"http": ":80", "https": ":443"}

// host is the bound host (and a port other than the scheme's default), lowercased and encoded; "" unbound.
func (kr *Keyring) host(scheme, netloc string) string {
	if !kr.BindHost {
		return ""
	}
	host := strings.ToLower(netloc) // the Host rule: no "@", ASCII only
	if port := defaultPorts[scheme]; port != "" {
		host = strings.TrimSuffix(host, port)
	}
	return encode(host)
}

// grantFor is grants.grant_for: the grant cookie's value to verify the request by, for a URL without a
// signature: the one grant cookie, or with several the one named for the deepest folder of the path.
func (kr *Keyring) grantFor(url, header string) (string, bool) {
	head, query, _ := strings.Cut(url, "?")
	if query != "" && strings.Contains("&"+query, "&"+kr.Params.Signature+"=") {
		return "", false
	}
	names, cookies := parseCookies(header)
	var grants []string
	for _, name := range names {
		if strings.HasPrefix(name, grantName) || strings.HasPrefix(name, "__Secure-"+grantName) ||
			strings.HasPrefix(name, "__Host-"+grantName) {
			grants = append(grants, name)
		}
	}
	if len(grants) <= 1 {
		if len(grants) == 0 {
			return "", false
		}
		return cookies[grants[0]], true
	}
	named := map[string]string{} // by the name less "__Secure-" or "__Host-": the later of two wins
	for _, name := range grants {
		named[name[strings.Index(name, grantName):]] = cookies[name]
	}
	path := canonicalPath(pathOf(head))
	var ends []int // where the folders a grant can name end: "/" to maxGrantDepth segments deep
	for end := strings.IndexByte(path, '/'); end >= 0 && len(ends) <= maxGrantDepth; {
		ends = append(ends, end)
		next := strings.IndexByte(path[end+1:], '/')
		if next < 0 {
			break
		}
		end += 1 + next
	}
	for i := len(ends) - 1; i >= 0; i-- {
		digest := sha256.Sum256([]byte(path[:ends[i]+1]))
		if value, ok := named[grantName+hex.EncodeToString(digest[:4])]; ok {
			return value, true
		}
	}
	return "", false
}

// parseCookies: the Cookie header's pairs, split at ";" and each at its first "=", spaces and tabs trimmed,
// the last value of a name kept; names in the order they first appear (a Python dict's).
func parseCookies(header string) ([]string, map[string]string) {
	var names []string
	cookies := map[string]string{}
	for _, part := range strings.Split(header, ";") {
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		name = strings.Trim(name, " \t")
		if _, seen := cookies[name]; !seen {
			names = append(names, name)
		}
		cookies[name] = strings.Trim(value, " \t")
	}
	return names, cookies
}

// pathOf is the path of head, a path or an absolute URL without its query.
func pathOf(head string) string {
	if strings.HasPrefix(head, "/") {
		return head
	}
	after := strings.Index(head, "://") + 3
	if start := strings.IndexByte(head[after:], '/'); start >= 0 {
		return head[after+start:]
	}
	return "/"
}

var grantValue = regexp.MustCompile(`^[A-Za-z0-9._~%&:-]+$`)

// verifyGrant is grants.verify: the URL with the cookie's query ("=" written ":") must verify as a folder link.
func (kr *Keyring) verifyGrant(url, value string, now time.Time) (link, error) {
	if len(value) > maxGrantValue || !grantValue.MatchString(value) {
		return link{}, refusal("malformed grant cookie")
	}
	head, query, _ := strings.Cut(url, "?")
	granted := strings.ReplaceAll(value, ":", "=")
	if query != "" {
		granted = query + "&" + granted
	}
	l, err := kr.verifyLink(head+"?"+granted, now)
	if err == nil && !l.folder {
		return link{}, refusal("grant cookie is not a folder link")
	}
	return l, err
}

var longGroup = regexp.MustCompile(`[0-9A-Fa-f]{5}`)

// split is text.split for the URLs Decide makes: the target, cut at the first "#" and "?", or with a bound host
// "scheme://host" and the target. The Host rule leaves Python's urlsplit little to do there: drop tabs and line
// breaks from the URL, read the host as the netloc, and refuse one in brackets that is no IPv6 address.
func split(url string) (scheme, netloc, path, query string, err error) {
	if !strings.HasPrefix(url, "/") {
		scheme, url, _ = strings.Cut(strings.NewReplacer("\t", "", "\r", "", "\n", "").Replace(url), "://")
		end := strings.IndexByte(url, '/')
		netloc, url = url[:end], url[end:]
		if _, bracketed, ok := strings.Cut(netloc, "["); ok {
			inside, _, _ := strings.Cut(bracketed, "]")
			// Python's ipaddress reads at most four digits a group, where netip takes leading zeros beyond
			if addr, err := netip.ParseAddr(inside); err != nil || !addr.Is6() || longGroup.MatchString(inside) {
				return "", "", "", "", refusal("malformed URL: invalid IPv6 host")
			}
		}
	}
	url, _, _ = strings.Cut(url, "#")
	path, query, _ = strings.Cut(url, "?")
	return scheme, netloc, path, query, nil
}

// parseQuery is text.parse_query: fields split at "&" (empty ones skipped), each at its first "=", "+" read
// as a space, then percent-decoded to bytes.
func parseQuery(query string) []pair {
	var pairs []pair
	for _, field := range strings.Split(query, "&") {
		if field != "" {
			name, value, _ := strings.Cut(field, "=")
			pairs = append(pairs, pair{unquote(strings.ReplaceAll(name, "+", " ")),
				unquote(strings.ReplaceAll(value, "+", " "))})
		}
	}
	return pairs
}

// unquote decodes each "%" and two hex digits to its byte, leaving malformed escapes as they are.
func unquote(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			value, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(value))
			i += 2
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// quote percent-encodes each byte but ASCII letters, digits and those of safe, with upper-case hex.
func quote(s, safe string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || strings.IndexByte(safe, c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// encode is a query name's or value's canonical form: all but RFC 3986 unreserved characters escaped.
func encode(s string) string { return quote(s, "-._~") }

var encodedSlash = regexp.MustCompile(`%2[Ff]`)

// canonicalPath is text.canonical_path: each piece between encoded slashes decoded and re-encoded (RFC 3986
// pchar and "/" left as they are), encoded slashes kept; dot segments, which clients would remove, encoded.
func canonicalPath(path string) string {
	pieces := encodedSlash.Split(path, -1)
	for i, piece := range pieces {
		pieces[i] = quote(unquote(piece), "/!$&'()*+,;=:@-._~")
	}
	canonical := strings.Join(pieces, "%2F")
	if strings.Contains(canonical, "/.") || strings.HasPrefix(canonical, ".") {
		segments := strings.Split(canonical, "/")
		for i, segment := range segments {
			if segment == "." || segment == ".." {
				segments[i] = strings.ReplaceAll(segment, ".", "%2E")
			}
		}
		canonical = strings.Join(segments, "/")
	}
	if canonical == "" {
		return "/"
	}
	return canonical
}

var plainPath = regexp.MustCompile(`^[A-Za-z0-9/!$&'()*+,;=:@._~-]*$`)

// below is folders.below: the decoded part of the request path below prefix, on whole segments, or false.
func below(path, prefix string) (string, bool) {
	if plainPath.MatchString(path) { // the usual request: nothing to decode
		if !strings.HasPrefix(path, prefix) {
			return "", false
		}
		rest := path[len(prefix):]
		segments := strings.Split(rest, "/")
		for _, segment := range segments[:len(segments)-1] {
			if isDotSegment(segment) {
				return "", false
			}
		}
		last := segments[len(segments)-1]
		return rest, last != "." && last != ".."
	}
	if pathProblem(path) != "" {
		return "", false
	}
	canonical := canonicalPath(path)
	if !strings.HasPrefix(canonical, prefix) {
		return "", false
	}
	return unquote(canonical[len(prefix):]), true
}

func isDotSegment(segment string) bool { return segment == "" || segment == "." || segment == ".." }

// pathProblem is folders.path_problem: why a request path can be inside no prefix ("" when it can): decoded up
// to three times, no encoded slash or backslash, only UTF-8, and at each depth clean segments.
func pathProblem(path string) string {
	if !isASCII(path) {
		return "raw non-ASCII character"
	}
	text := path
	for i := 0; i < maxDecodings; i++ {
		if !strings.Contains(text, "%") {
			return segmentsProblem(text)
		}
		for _, escape := range []string{"%2F", "%2f", "%5C", "%5c"} {
			if strings.Contains(text, escape) {
				return "encoded slash or backslash"
			}
		}
		decoded := unquote(text)
		if !utf8.ValidString(decoded) {
			return "not UTF-8 once decoded"
		}
		if problem := segmentsProblem(decoded); problem != "" {
			return problem
		}
		if decoded == text {
			return ""
		}
		text = decoded
	}
	return "percent-encoded too many times"
}

func segmentsProblem(decoded string) string {
	if !strings.HasPrefix(decoded, "/") {
		return "not an absolute path"
	}
	if strings.Contains(decoded, "\\") {
		return "backslash"
	}
	for _, r := range decoded {
		if r <= 0x1f || 0x7f <= r && r <= 0x9f {
			return "control character"
		}
	}
	segments := strings.Split(decoded, "/")
	for _, segment := range segments[1 : len(segments)-1] {
		if isDotSegment(segment) {
			return "empty, '.' or '..' segment"
		}
	}
	if last := segments[len(segments)-1]; last == "." || last == ".." {
		return "empty, '.' or '..' segment"
	}
	return ""
}

// codePoints are s's characters as Python decodes bytes with surrogateescape: a byte that is not part of
// valid UTF-8 is one character, U+DC00 plus the byte.
func codePoints(s string) []rune {
	points := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			r = 0xDC00 + rune(s[i])
		}
		points = append(points, r)
		i += size
	}
	return points
}

// lessCodePoints orders decoded names as Python's str comparison does.
func lessCodePoints(a, b string) bool {
	x, y := codePoints(a), codePoints(b)
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return len(x) < len(y)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
